import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { errorHandler } from '../../src/server/errors/errors.js';
import { StoreError } from '../../src/store/store-error.js';
import { BRANCH, COMPONENT, describeEachBackend, useTestServer, type Json } from '../support/storage-api-server.js';

/**
 * Every route given a huge value (issue 33 item 5): a 500,000-character field of a body, or an id
 * as long as a path may carry, is refused or taken — and an answer that quotes it back quotes a
 * bounded excerpt. The answer of each attempt stays within a few KB, whatever field, route or
 * encoding (JSON or form).
 */

/** The largest answer a refusal may be: its message, the key and message of `errors`, a quoted excerpt or two. */
const MAX_ANSWER_BYTES = 4096;
/**
 * Below the server's last bound on a message (2,000 characters, src/server/errors/errors.ts): a message
 * that reaches it quoted a value whole and was cut there, which this test counts as a failure.
 */
const MAX_MESSAGE_CHARACTERS = 1999;
/** 500,000 characters that an id check does not refuse outright: plain letters, then a quote and a space */
const HUGE = `${'x'.repeat(499_990)}" and co`;
/** As long as a path segment may be (the router refuses longer ones with 414) */
const LONG_ID = 'y'.repeat(1000);

interface Attempt {
  method: string;
  path: string;
  /** the fields of the body; each in turn is replaced with HUGE (a list field with [HUGE]) */
  fields?: Record<string, unknown>;
  form?: boolean;
}

describeEachBackend('server: huge values are quoted back bounded', (backend) => {
  const server = useTestServer({ backend });
  let configId: string;
  let rowId: string;
  const configs = `${BRANCH}/components/${COMPONENT}/configs`;

  before(async () => {
    configId = String((await server().createConfig({ name: 'target', configuration: {} })).id);
    rowId = String((await server().createRow(configId, { name: 'row', configuration: {} })).id);
    await server().post('/v2/storage/buckets', { json: { name: 'shop', stage: 'in' } });
  });

  /** Every attempt: each field huge in turn, or the path as it is (ids in it already long). */
  function* requests(
    attempts: Attempt[],
  ): Generator<{ what: string; method: string; path: string; body?: Json; form?: boolean }> {
    for (const attempt of attempts) {
      if (!attempt.fields) {
        yield { what: `${attempt.method} ${attempt.path.slice(0, 80)}`, method: attempt.method, path: attempt.path };
        continue;
      }
      for (const key of Object.keys(attempt.fields)) {
        const value = attempt.fields[key];
        const huge = Array.isArray(value)
          ? [HUGE]
          : value !== null && typeof value === 'object'
            ? { [HUGE]: HUGE }
            : HUGE;
        yield {
          what: `${attempt.method} ${attempt.path.slice(0, 80)} ${key}`,
          method: attempt.method,
          path: attempt.path,
          body: { ...attempt.fields, [key]: huge },
          form: attempt.form,
        };
      }
    }
  }

  async function expectBounded(attempts: Attempt[]): Promise<void> {
    const failures: string[] = [];
    for (const r of requests(attempts)) {
      const res = await server().request(r.method, r.path, {
        ...(r.body === undefined
          ? {}
          : r.form
            ? { form: Object.fromEntries(Object.entries(r.body).map(([k, v]) => [k, String(v)])) }
            : { json: r.body }),
      });
      const bytes = Buffer.byteLength(res.text);
      if (res.status >= 500) failures.push(`${r.what}: ${res.status} ${res.text.slice(0, 200)}`);
      else if (res.status >= 400 && bytes > MAX_ANSWER_BYTES) failures.push(`${r.what}: ${res.status}, ${bytes} bytes`);
      else if (res.status >= 400 && String(res.body?.error).length > MAX_MESSAGE_CHARACTERS)
        failures.push(`${r.what}: ${res.status}, a message of ${String(res.body.error).length} characters`);
    }
    assert.deepEqual(failures, []);
  }

  it('configurations, rows, versions and state', async () => {
    const config = `${configs}/${configId}`;
    const row = `${config}/rows/${rowId}`;
    const fields = { name: 'n', description: 'd', configuration: '{}', changeDescription: 'c', isDisabled: 'false' };
    await expectBounded([
      { method: 'POST', path: configs, fields: { ...fields, configurationId: 'new-id', state: '{}' } },
      { method: 'POST', path: configs, fields: { ...fields, configurationId: 'new-id' }, form: true },
      { method: 'PUT', path: config, fields: { ...fields, state: '{}', rowsSortOrder: ['a'] } },
      { method: 'PUT', path: `${config}/state`, fields: { state: '{}' } },
      { method: 'POST', path: `${config}/rows`, fields: { ...fields, rowId: 'r' } },
      { method: 'PUT', path: row, fields },
      { method: 'PUT', path: `${row}/state`, fields: { state: '{}' } },
      { method: 'POST', path: `${config}/versions/1/create`, fields: { name: 'copy', changeDescription: 'c' } },
      { method: 'POST', path: `${config}/versions/1/rollback`, fields: { changeDescription: 'c' } },
      { method: 'POST', path: `${row}/versions/1/rollback`, fields: { changeDescription: 'c' } },
      { method: 'POST', path: `${config}/metadata`, fields: { metadata: [{ key: 'k', value: 'v' }] } },
      { method: 'GET', path: `${configs}/${LONG_ID}` },
      { method: 'GET', path: `${config}/rows/${LONG_ID}` },
      { method: 'GET', path: `${config}/versions/${LONG_ID}` },
      { method: 'GET', path: `${BRANCH}/components/${LONG_ID}/configs` },
      { method: 'DELETE', path: `${configs}/${LONG_ID}` },
    ]);
  });

  it('buckets, tables, files and their jobs', async () => {
    const S = '/v2/storage';
    await expectBounded([
      { method: 'POST', path: `${S}/buckets`, fields: { name: 'b', stage: 'in', description: 'd', backend: 'x' } },
      {
        method: 'POST',
        path: `${S}/buckets/in.c-shop/tables-async`,
        fields: { name: 't', dataFileId: '1', primaryKey: 'id', delimiter: ',', enclosure: '"', columns: ['a'] },
      },
      {
        method: 'POST',
        path: `${S}/tables/in.c-shop.t/import-async`,
        fields: {
          dataFileId: '1',
          incremental: '1',
          deleteWhereColumn: 'a',
          deleteWhereValues: ['v'],
          deleteWhereOperator: 'eq',
        },
      },
      {
        method: 'POST',
        path: `${S}/tables/in.c-shop.t/export-async`,
        fields: { columns: ['a'], whereColumn: 'a', whereValues: ['v'], whereOperator: 'eq', changedSince: '-1 day' },
      },
      { method: 'POST', path: `${S}/files/prepare`, fields: { name: 'f.csv', tags: ['t'], isPermanent: '0' } },
      {
        method: 'POST',
        path: `${S}/tokens`,
        fields: { description: 'd', expiresIn: '60', bucketPermissions: { x: 'read' } },
      },
      { method: 'GET', path: `${S}/buckets/${LONG_ID}` },
      { method: 'GET', path: `${S}/tables/${LONG_ID}` },
      { method: 'GET', path: `${S}/tables/in.c-shop.${LONG_ID}/data-preview` },
      { method: 'GET', path: `${S}/files/${LONG_ID}` },
      { method: 'GET', path: `${S}/jobs/${LONG_ID}` },
      { method: 'GET', path: `${S}/tokens/${LONG_ID}` },
      { method: 'DELETE', path: `${S}/buckets/${LONG_ID}` },
    ]);
  });

  it("a file's huge header: the job's error quotes an excerpt of it", async () => {
    const S = '/v2/storage';
    const failures: string[] = [];
    for (const [what, header, fields] of [
      ['a huge column name', `id,${HUGE.replaceAll('"', '')}\n1,2\n`, { name: 'huge' }],
      [
        'many columns',
        `${Array.from({ length: 2000 }, (_, i) => `column_${i}_${'c'.repeat(200)}`).join(',')}\n`,
        { name: 'wide' },
      ],
      ['a huge key', 'id,name\n1,a\n', { name: 'keyed', primaryKey: HUGE }],
    ] as const) {
      const prepared = await server().post(`${S}/files/prepare`, { json: { name: 'h.csv' } });
      const put = await fetch(prepared.body.uploadParams.url, {
        method: 'PUT',
        headers: { 'X-StorageApi-Token': server().token },
        body: new TextEncoder().encode(header),
      });
      assert.equal(put.status, 200);
      const started = await server().post(`${S}/buckets/in.c-shop/tables-async`, {
        json: { ...fields, dataFileId: prepared.body.id },
      });
      let job: Json = started.body;
      while (started.status === 202 && job.status !== 'success' && job.status !== 'error')
        job = (await server().get(`${S}/jobs/${job.id}`)).body;
      const answer = started.status === 202 ? JSON.stringify(job) : started.text;
      // each is refused: the job ends error, or the request is refused before one
      assert.ok(job.status === 'error' || started.status === 400, `${what}: ${started.status} ${job.status}`);
      if (Buffer.byteLength(answer) > MAX_ANSWER_BYTES) failures.push(`${what}: ${Buffer.byteLength(answer)} bytes`);
    }
    assert.deepEqual(failures, []);
  });

  it('searches jobs with 1,000 values in a list filter; 1,001 are refused naming the limit', async () => {
    const created = await server().post('/jobs', { json: { component: COMPONENT, config: configId } });
    assert.equal(created.status, 201, created.text);
    for (const [name, value] of [
      ['configRowIds', 'r'],
      ['configRowIds[]', 'r'],
      ['config', 'c'],
      ['component', 'c'],
      ['runId', '1'],
      ['id', '1'],
      ['tokenId', '1'],
      ['branchId', '1'],
      ['tokenDescription', 'd'],
      ['mode', 'run'],
      ['status', 'success'],
    ]) {
      // injected: 1,000 values of most names are longer than the 16 KiB of headers node reads
      const search = async (n: number) => {
        const url = `/search/jobs?${Array.from({ length: n }, () => `${name}=${value}`).join('&')}`;
        const res = await server().app.inject({
          method: 'GET',
          url,
          headers: { 'x-storageapi-token': server().token },
        });
        return { status: res.statusCode, text: res.payload, body: res.json<Json>() };
      };
      const found = await search(1000);
      assert.equal(found.status, 200, `${name}: ${found.text.slice(0, 300)}`);
      assert.ok(Array.isArray(found.body), name);
      const refused = await search(1001);
      assert.equal(refused.status, 400, `${name}: ${refused.text.slice(0, 300)}`);
      assert.match(refused.body.error, /at most 1000 values/, name);
    }
  });

  it('queue jobs, events and schedules', async () => {
    await expectBounded([
      {
        method: 'POST',
        path: '/jobs',
        fields: {
          component: COMPONENT,
          config: configId,
          mode: 'run',
          branchId: '1',
          configRowIds: [rowId],
          tag: 't',
          parentRunId: '1',
          orchestrationJobId: '1',
        },
      },
      { method: 'POST', path: '/jobs', fields: { componentId: COMPONENT, configId, configData: '' } },
      { method: 'POST', path: '/schedules', fields: { configurationId: configId } },
      { method: 'GET', path: `/jobs/${LONG_ID}` },
      { method: 'POST', path: `/jobs/${LONG_ID}/kill` },
      { method: 'GET', path: `/schedules/${LONG_ID}` },
      { method: 'DELETE', path: `/schedules/${LONG_ID}` },
      { method: 'GET', path: `/search/jobs?status=${'z'.repeat(8000)}&component=${'z'.repeat(4000)}` },
      { method: 'GET', path: `/search/jobs?limit=${'9'.repeat(8000)}` },
      { method: 'GET', path: `/search/jobs?createdTimeFrom=${'z'.repeat(8000)}` },
      { method: 'GET', path: `/search/jobs?sortBy=${'z'.repeat(8000)}` },
      { method: 'GET', path: `/v2/storage/events?runId=${'1'.repeat(8000)}` },
    ]);
  });
});

describe('server: an error answer is bounded whatever its message quotes', () => {
  it('cuts a huge message and the keys and messages of its details, and lists at most 20 of them', async () => {
    const app = Fastify();
    app.setErrorHandler(errorHandler(1024));
    const details = Array.from({ length: 5000 }, (_, i) => ({
      key: `k${i}${'k'.repeat(10_000)}`,
      message: 'm'.repeat(10_000),
    }));
    app.get('/fails', async () => {
      throw new StoreError(400, 'storage.validation', `Invalid: ${'x'.repeat(1_000_000)}`, details);
    });
    const res = await app.inject({ method: 'GET', url: '/fails' });
    await app.close();
    assert.equal(res.statusCode, 400);
    const body = res.json<{ error: string; errors: Array<{ key: string; message: string }> }>();
    assert.equal(body.error.length, 2001);
    assert.ok(body.error.startsWith('Invalid: xxx') && body.error.endsWith('…'));
    assert.equal(body.errors.length, 20);
    assert.ok(body.errors.every((d) => d.key.length <= 2001 && d.message.length <= 2001));
    assert.ok(res.payload.length < 100_000, `${res.payload.length} bytes`);
  });
});
