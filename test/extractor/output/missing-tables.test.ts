import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OutputWriter } from '../../../src/extractor/output/output-writer.js';
import { decodeJson } from '../../../src/json/index.js';
import { captureLogger } from '../../support/extraction.js';
import { runMapped, runOutput } from '../../support/output.js';

const withPk =
  '{"users":{"id":{"mapping":{"destination":"id","primaryKey":true}},"name":"name","tags":{"type":"table","destination":"tags","tableMapping":{"":"tag"}}}}';

describe('MissingTableHelper: header-only mapped tables', () => {
  it('writes mapped tables no job produced, with incremental first in the manifest', async () => {
    const { files, written } = await runMapped(withPk, [{ rows: '[]', type: 'users' }]);
    assert.equal(files.get('b.users'), '"id","name"\n');
    assert.equal(
      files.get('b.users.manifest'),
      '{"destination":"in.c-b.users","incremental":false,"primary_key":["id"]}',
    );
    assert.equal(files.get('b.tags'), '"tag","users_pk"\n');
    assert.equal(files.get('b.tags.manifest'), '{"incremental":false,"destination":"in.c-b.tags"}');
    assert.deepEqual(written, ['b.users', 'b.tags']);
  });

  it('keeps the link column in the mapper header but never in a helper header', async () => {
    const { files } = await runMapped(
      '{"users":{"id":"id","name":"name","tags":{"type":"table","destination":"tags","tableMapping":{"":"tag"}}}}',
      [{ rows: '[]', type: 'users' }],
    );
    assert.equal(files.get('b.users'), '"id","name","tags"\n');
    const helperOnly = await runMapped(
      '{"users":{"id":"id","tags":{"type":"table","destination":"tags","tableMapping":{"":"tag"}}}}',
      [],
    );
    assert.equal(helperOnly.files.get('b.users'), '"id"\n');
    assert.equal(helperOnly.files.get('b.users.manifest'), '{"incremental":false,"destination":"in.c-b.users"}');
  });

  it('fills the child tables of a mapping whose rows had no child values', async () => {
    const { files } = await runMapped(
      '{"users":{"id":"id","tags":{"type":"table","destination":"tags","tableMapping":{"":"tag"}}}}',
      [{ rows: '[{"id":1},{"id":2,"tags":[]}]', type: 'users' }],
    );
    assert.equal(files.get('b.users'), '"id","tags"\n"1",""\n"2",""\n');
    assert.equal(files.get('b.tags'), '"tag","users_pk"\n');
    assert.equal(files.get('b.tags.manifest'), '{"incremental":false,"destination":"in.c-b.tags"}');
    // with a primary key the mapper itself writes a phantom row, so there is nothing to fill
    const keyed = await runMapped(withPk, [{ rows: '[{"id":1,"name":"A"}]', type: 'users' }]);
    assert.equal(keyed.files.get('b.tags'), '"tag","users_pk"\n"","1"\n');
    assert.equal(keyed.files.get('b.tags.manifest'), '{"destination":"in.c-b.tags","incremental":false}');
  });

  it('writes an unused mapping as a header-only table', async () => {
    const { files } = await runMapped('{"users":{"id":"id"},"other":{"x":"x"}}', [
      { rows: '[{"id":1}]', type: 'users' },
    ]);
    assert.equal(files.get('b.other'), '"x"\n');
    assert.equal(files.get('b.other.manifest'), '{"incremental":false,"destination":"in.c-b.other"}');
  });

  it('names the parent key column as configured and declares primary keys', async () => {
    const { files } = await runMapped(
      '{"users":{"id":{"mapping":{"destination":"id","primaryKey":true}},"contacts":{"type":"table","destination":"user-contact","parentKey":{"primaryKey":true,"destination":"userId"},"tableMapping":{"email":"email","addresses.0":{"type":"table","destination":"address","parentKey":{"primaryKey":true},"tableMapping":{"street":"street"}}}}}}',
      [],
    );
    assert.equal(files.get('b.user-contact'), '"email","userId"\n');
    assert.equal(
      files.get('b.user-contact.manifest'),
      '{"incremental":false,"destination":"in.c-b.user-contact","primary_key":["userId"]}',
    );
    assert.equal(files.get('b.address'), '"street","user-contact_pk"\n');
    assert.equal(
      files.get('b.address.manifest'),
      '{"incremental":false,"destination":"in.c-b.address","primary_key":["user-contact_pk"]}',
    );
  });

  it("uses each config's own incrementalOutput and bucket", async () => {
    const { files } = await runOutput([
      { bucket: 'one', mappings: '{"a":{"x":"x"}}', incremental: true, batches: [] },
      { bucket: null, mappings: '{"c":{"z":"z"}}', incremental: false, batches: [] },
      { bucket: 'one', mappings: '{"d":{"w":"w"}}', incremental: false, batches: [] },
    ]);
    assert.equal(files.get('one.a.manifest'), '{"incremental":true,"destination":"in.c-one.a"}');
    assert.equal(files.get('one.d.manifest'), '{"incremental":false,"destination":"in.c-one.d"}');
    assert.equal(files.get('c'), '"z"\n');
    assert.equal(files.get('c.manifest'), '{"incremental":false}');
  });

  it('does not overwrite a table that exists, nor write one twice for two configs of a bucket', async () => {
    const { files, written } = await runOutput(
      [
        { mappings: '{"a":{"x":"x"},"kept":{"y":"y"}}', batches: [] },
        { mappings: '{"a":{"x":"other"}}', batches: [] },
      ],
      { existing: { 'b.kept': 'foo' } },
    );
    assert.equal(files.get('b.kept'), 'foo');
    assert.equal(files.get('b.a'), '"x"\n');
    assert.deepEqual(written, ['b.a']);
  });

  it('treats a mapping that is itself a table entry as its child table only', async () => {
    const { files, written } = await runMapped(
      '{"top":{"type":"table","destination":"tt","tableMapping":{"x":{"mapping":{"destination":"x","primaryKey":true}}}}}',
      [],
      {
        incremental: true,
      },
    );
    assert.deepEqual(written, ['b.tt']);
    assert.equal(files.get('b.tt'), '"x","top_pk"\n');
    assert.equal(files.get('b.tt.manifest'), '{"incremental":true,"destination":"in.c-b.tt","primary_key":["x"]}');
  });

  it('gives a child no parent key column with parentKey.disable, and keeps primary keys and strings under integer keys', async () => {
    const { files } = await runMapped(
      '{"never":{"id":{"mapping":{"destination":"id","primaryKey":true}},"0":"zero","kids":{"type":"table","destination":"nkids","parentKey":{"primaryKey":true},"tableMapping":{"k":"k"}},"dis":{"type":"table","destination":"ndis","parentKey":{"disable":true,"destination":"pp","primaryKey":true},"tableMapping":{"d":"d"}}}}',
      [],
      { incremental: true },
    );
    assert.equal(files.get('b.never'), '"id","zero"\n');
    assert.equal(
      files.get('b.never.manifest'),
      '{"incremental":true,"destination":"in.c-b.never","primary_key":["id"]}',
    );
    assert.equal(files.get('b.nkids'), '"k","never_pk"\n');
    assert.equal(
      files.get('b.nkids.manifest'),
      '{"incremental":true,"destination":"in.c-b.nkids","primary_key":["never_pk"]}',
    );
    assert.equal(files.get('b.ndis'), '"d"\n');
    assert.equal(files.get('b.ndis.manifest'), '{"incremental":true,"destination":"in.c-b.ndis"}');
  });

  it('reads a destination as PHP does: missing is an empty column, a string mapping gives its first byte', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-missing-bytes-'));
    try {
      const { files } = await runMapped(
        '{"a":{"x":{"mapping":{"primaryKey":true}},"y":{"type":"user","mapping":"éabc"},"z":{"mapping":""},"w":{"mapping":5}}}',
        [],
      );
      assert.equal(files.get('b.a.manifest'), '{"incremental":false,"destination":"in.c-b.a","primary_key":[null]}');
      // the first byte of "é" alone, written as the raw byte
      const writer = new OutputWriter(dir, captureLogger().logger, undefined, dir);
      await writer.parserFor('b', { incremental: false, mappings: decodeJson('{"a":{"y":{"mapping":"éabc"}}}') });
      await writer.finish();
      assert.deepEqual(await readFile(path.join(dir, 'b.a')), Buffer.from([0x22, 0xc3, 0x22, 0x0a]));
      assert.equal(files.get('b.a')!.startsWith('"","'), true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a column entry without mapping as GE words it', async () => {
    await assert.rejects(
      runMapped('{"a":{"x":{"type":"user"}}}', []),
      /^UserError: Missing mapping key at item with type "user"$/,
    );
    await assert.rejects(
      runMapped('{"a":{"x":{"foo":1}}}', []),
      /^UserError: Missing mapping key at item with type ""$/,
    );
    await assert.rejects(
      runMapped('{"a":{"x":{"type":["q"],"mapping":{"destination":"x"}}}}', []),
      /^UserError: Invalid mapping type "Array"\.$/,
    );
  });

  it('refuses an unknown mapping type', async () => {
    await assert.rejects(
      runMapped('{"a":{"x":{"type":"date","mapping":{"destination":"x"}}}}', []),
      /^UserError: Invalid mapping type "date"\.$/,
    );
  });
});
