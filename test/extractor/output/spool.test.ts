import assert from 'node:assert/strict';
import { mkdtemp, rm, truncate } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Spool, SPOOL_WRITE_BYTES, type SpoolBatch } from '../../../src/extractor/output/spool.js';
import { decodeJson, JsonFloat, stringifyExact, type JsonObject, type JsonValue } from '../../../src/json/index.js';

async function roundTrip(batches: SpoolBatch[], tmp: string): Promise<SpoolBatch[]> {
  const spool = await Spool.create(tmp);
  try {
    for (const batch of batches) {
      spool.append(batch);
      await spool.settle();
    }
    const out: SpoolBatch[] = [];
    for await (const batch of spool.read()) out.push(batch);
    return out;
  } finally {
    await spool.dispose();
  }
}

describe('spool: the on-disk record queue', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'gex-spool-test-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('gives back identical values: floats stay floats, int64 and key order survive', async () => {
    const rows = decodeJson(
      '[{"2":"two","1":"one","f":1.0,"g":-0.0,"big":9223372036854775807,"n":null,"nested":{"a":[1,2.5,{"x":true}]}},[],{}]',
    ) as JsonValue[];
    const injected = decodeJson('{"parent_id":1.5,"user":"u"}') as JsonObject;
    const [back] = await roundTrip([{ dataType: 'items', injected, rows }], tmp);
    assert.equal(back.dataType, 'items');
    assert.equal(stringifyExact(back.rows), stringifyExact(rows));
    assert.equal(stringifyExact(back.injected), '{"parent_id":1.5,"user":"u"}');
    const first = back.rows[0] as JsonObject;
    assert.ok(first.get('f') instanceof JsonFloat);
    assert.deepEqual([...first.keys()].slice(0, 2), ['2', '1']);
    assert.equal(typeof first.get('big'), 'bigint');
  });

  it('reads batches in order, including ones larger than its read buffer', async () => {
    const big = Array.from(
      { length: 30_000 },
      (_, i) =>
        new Map<string, JsonValue>([
          ['id', i],
          ['text', `row ${i} `.repeat(8)],
        ]),
    );
    const batches = [
      { dataType: 'a', injected: new Map(), rows: [new Map<string, JsonValue>([['id', 1]])] },
      { dataType: 'b', injected: new Map(), rows: big },
      { dataType: 'a', injected: new Map(), rows: [new Map<string, JsonValue>([['id', 2]])] },
    ];
    const back = await roundTrip(batches, tmp);
    assert.deepEqual(
      back.map((b) => [b.dataType, b.rows.length]),
      [
        ['a', 1],
        ['b', 30_000],
        ['a', 1],
      ],
    );
    assert.equal(stringifyExact(back[1].rows[29_999]), stringifyExact(big[29_999]));
  });

  it('gathers small pages in memory up to a write of 256 KB, then hands them to the file at once', async () => {
    const spool = await Spool.create(tmp);
    const recipe = { records: (body: Buffer) => decodeJson(body.toString()) as JsonValue[] };
    const page = (id: number, size: number) => Buffer.from(JSON.stringify([{ id, text: 'x'.repeat(size) }]));
    try {
      let held = 0;
      let id = 0;
      // pages of ~10 KB: held until the next one would pass the threshold's worth
      while (held < SPOOL_WRITE_BYTES - 20_000) {
        spool.append(
          { dataType: 'a', injected: new Map(), rows: [] },
          { body: page(++id, 10_000), status: 200, recipe },
        );
        assert.ok(spool.bytesInMemory > held, 'a small page is held in memory');
        held = spool.bytesInMemory;
      }
      spool.append({ dataType: 'a', injected: new Map(), rows: [] }, { body: page(++id, 30_000), status: 200, recipe });
      assert.equal(spool.bytesInMemory, 0, 'once a write is worth it, everything held goes to the file');
      spool.append({ dataType: 'a', injected: new Map(), rows: [] }, { body: page(++id, 10), status: 200, recipe });
      assert.ok(spool.bytesInMemory > 0);
      const ids: number[] = [];
      // reading finishes the file: the last page held is written too
      for await (const batch of spool.read()) ids.push(...batch.rows.map((r) => (r as JsonObject).get('id') as number));
      assert.deepEqual(
        ids,
        Array.from({ length: id }, (_, i) => i + 1),
      );
    } finally {
      await spool.dispose();
    }
  });

  it('reports a truncated queue file instead of dropping records silently', async () => {
    const spool = await Spool.create(tmp);
    try {
      spool.append({ dataType: 'a', injected: new Map(), rows: [new Map<string, JsonValue>([['id', 1]])] });
      await spool.finish();
      await truncate(spool.file, 10);
      await assert.rejects(async () => {
        for await (const batch of spool.read()) void batch;
      }, /ends in a truncated batch/);
    } finally {
      await spool.dispose();
    }
  });
});
