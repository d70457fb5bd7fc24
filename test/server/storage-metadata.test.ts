import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProjectTables } from '../../src/store/tables/index.js';
import {
  describeEachBackend,
  useTestServer,
  type ApiResponse,
  type Json,
  type TestServer,
} from '../support/storage-api-server.js';

/**
 * Keboola's metadata calls of buckets, tables and columns on `gex serve` (docs/storage-api.md#storage-metadata):
 * the bodies Keboola's clients send (JSON, and the PHP client's older form), the answers they read,
 * Keboola's error codes, tokens and projects, and hostile input.
 */

const S = '/v2/storage';

async function load(server: TestServer, token: string, tableId: string, rows: string[][]): Promise<void> {
  const info = await server.backend.authenticate(token);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-http-metadata-'));
  try {
    const file = path.join(dir, 'data.csv');
    const cell = (v: string) => `"${v.replaceAll('"', '""')}"`;
    await writeFile(file, rows.map((r) => r.map(cell).join(',') + '\n').join(''));
    await new ProjectTables(server.backend.db, info!.projectId).load(file, { destination: tableId });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function assertError(res: ApiResponse, status: number, code: string, message: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.code, code, res.text);
  assert.equal(res.body.status, 'error');
  assert.match(res.body.error, message);
  assert.doesNotMatch(res.text, /[\u0000-\u001f]/);
}

const items = (list: Json[]) => list.map((m: Json) => `${m.provider}:${m.key}=${m.value}`);

describeEachBackend('server: metadata of buckets, tables and columns', (backend) => {
  const server = useTestServer({ backend });
  let token: string;
  let project = 0;

  beforeEach(async () => {
    token = await server().createToken({ project: `metadata-${++project}` });
    await load(server(), token, 'in.c-shop.users', [
      ['id', 'name', 'sex'],
      ['1', 'Ann', 'f'],
    ]);
  });
  afterEach(async () => {
    const info = await server().backend.authenticate(token);
    const tables = new ProjectTables(server().backend.db, info!.projectId);
    for (const b of await tables.listBuckets()) await tables.deleteBucket(b.id);
  });

  it("sets, lists and deletes in Keboola's shapes, in both path forms; the table detail carries them all", async () => {
    for (const prefix of [S, `${S}/branch/default`]) {
      const bucket = await server().post(`${prefix}/buckets/in.c-shop/metadata`, {
        token,
        json: { provider: 'test-component', metadata: [{ key: 'some-key', value: 'Some value' }] },
      });
      assert.equal(bucket.status, 201, bucket.text);
      assert.deepEqual(Object.keys(bucket.body[0]), ['id', 'key', 'value', 'provider', 'timestamp']);
      assert.match(bucket.body[0].id, /^\d+$/);
      assert.match(bucket.body[0].timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/);

      // the JSON call: the table's items and its columns', answered with both
      const table = await server().post(`${prefix}/tables/in.c-shop.users/metadata`, {
        token,
        json: {
          provider: 'test-component',
          metadata: [{ key: 'KBC.description', value: 'Users' }],
          columnsMetadata: { 0: [{ columnName: 'name', key: 'KBC.datatype.basetype', value: 'STRING' }] },
        },
      });
      assert.equal(table.status, 201, table.text);
      assert.deepEqual(Object.keys(table.body), ['metadata', 'columnsMetadata']);
      assert.deepEqual(items(table.body.metadata), ['test-component:KBC.description=Users']);
      assert.deepEqual(items(table.body.columnsMetadata.name), ['test-component:KBC.datatype.basetype=STRING']);

      // the PHP client's older form call: the table's list
      const form = await server().post(`${prefix}/tables/in.c-shop.users/metadata`, {
        token,
        form: 'provider=user&metadata%5B0%5D%5Bkey%5D=KBC.description&metadata%5B0%5D%5Bvalue%5D=Mine',
      });
      assert.equal(form.status, 201, form.text);
      assert.deepEqual(items(form.body), ['test-component:KBC.description=Users', 'user:KBC.description=Mine']);

      const column = await server().post(`${prefix}/columns/in.c-shop.users.sex/metadata`, {
        token,
        json: { provider: 'user', metadata: [{ key: 'KBC.datatype.nullable', value: 1 }] },
      });
      assert.equal(column.status, 201, column.text);
      assert.deepEqual(items(column.body), ['user:KBC.datatype.nullable=1']);

      const detail = (await server().get(`${prefix}/tables/in.c-shop.users`, { token })).body;
      assert.deepEqual(items(detail.metadata), ['test-component:KBC.description=Users', 'user:KBC.description=Mine']);
      // by column, in the table's column order
      assert.deepEqual(Object.keys(detail.columnMetadata), ['name', 'sex']);
      assert.deepEqual(items(detail.bucket.metadata), ['test-component:some-key=Some value']);
      assert.deepEqual(
        (await server().get(`${prefix}/columns/in.c-shop.users.sex/metadata`, { token })).body,
        column.body,
      );
      // lists: the tables' own metadata; their columns' with include=columnMetadata
      const list = (await server().get(`${prefix}/tables`, { token })).body;
      assert.deepEqual(list[0].metadata, detail.metadata);
      assert.equal(list[0].columnMetadata, undefined);
      const withColumns = (await server().get(`${prefix}/buckets/in.c-shop/tables?include=columnMetadata`, { token }))
        .body;
      assert.deepEqual(withColumns[0].columnMetadata, detail.columnMetadata);
      assert.deepEqual((await server().get(`${prefix}/buckets/in.c-shop`, { token })).body.metadata, bucket.body);

      // deletes: 204, then gone; an id of another object is not found there
      const id = detail.metadata[0].id;
      assertError(
        await server().delete(`${prefix}/columns/in.c-shop.users.sex/metadata/${id}`, { token }),
        404,
        'storage.metadata.notFound',
        /^The supplied metadata ID was not found/,
      );
      assert.equal((await server().delete(`${prefix}/tables/in.c-shop.users/metadata/${id}`, { token })).status, 204);
      assertError(
        await server().delete(`${prefix}/tables/in.c-shop.users/metadata/${id}`, { token }),
        404,
        'storage.metadata.notFound',
        /not found/,
      );
      assert.deepEqual(items((await server().get(`${prefix}/tables/in.c-shop.users/metadata`, { token })).body), [
        'user:KBC.description=Mine',
      ]);
      for (const path of [
        'buckets/in.c-shop',
        'tables/in.c-shop.users',
        'columns/in.c-shop.users.name',
        'columns/in.c-shop.users.sex',
      ])
        for (const m of (await server().get(`${prefix}/${path}/metadata`, { token })).body)
          assert.equal((await server().delete(`${prefix}/${path}/metadata/${m.id}`, { token })).status, 204);
      const empty = (await server().get(`${prefix}/tables/in.c-shop.users`, { token })).body;
      assert.deepEqual([empty.metadata, empty.columnMetadata, empty.bucket.metadata], [[], [], []]);
    }
  });

  it('refuses what Keboola refuses with its codes, naming the field', async () => {
    const post = (path: string, json: unknown) => server().post(`${S}/${path}/metadata`, { token, json });
    for (const path of ['buckets/in.c-shop', 'tables/in.c-shop.users', 'columns/in.c-shop.users.id']) {
      assertError(
        await post(path, { provider: 'p', metadata: { key: 'k', value: 'v' } }),
        400,
        'storage.metadata.invalidStructure',
        /^Invalid structure\. Metadata must be provided as an array of objects with 'key' and 'value' members/,
      );
      for (const key of ['%invalidKey', '', 'k'.repeat(256)])
        assertError(
          await post(path, { provider: 'p', metadata: [{ key, value: 'v' }] }),
          400,
          'storage.metadata.invalidKey',
          /^Invalid Metadata Key \(metadata\[0\]\[key\]\)/,
        );
      assertError(
        await server().post(`${S}/${path}/metadata`, { token, form: { provider: 'valid', metadata: 'not an array' } }),
        400,
        'storage.metadata.invalidParameter',
        /The metadata parameter must be an array/,
      );
      assertError(
        await post(path, { provider: 'valid' }),
        400,
        'storage.metadata.invalidParameter',
        /must be an array/,
      );
      assertError(
        await post(path, { metadata: [{ key: 'k', value: 'v' }] }),
        400,
        'storage.metadata.invalidProvider',
        /^Provider is required\.$/,
      );
      assertError(
        await post(path, { provider: '%invalidCharacter$', metadata: [{ key: 'k', value: 'v' }] }),
        400,
        'storage.metadata.invalidProvider',
        /^Invalid metadata provider/,
      );
      assertError(
        await post(path, { provider: 'p', metadata: [{ key: 'k', value: 'v'.repeat(65_536) }] }),
        400,
        'storage.metadata.invalidValue',
        /metadata\[0\]\[value\] is 65536 bytes long/,
      );
      assertError(
        await server().delete(`${S}/${path}/metadata/9999999`, { token }),
        404,
        'storage.metadata.notFound',
        /not found/,
      );
      assertError(
        await server().delete(`${S}/${path}/metadata/notNumber`, { token }),
        400,
        'storage.metadata.invalidId',
        /The metadata id notNumber is not a number/,
      );
    }
    assertError(
      await post('tables/in.c-shop.users', { provider: 'p', columnsMetadata: { nope: [{ key: 'k', value: 'v' }] } }),
      404,
      'storage.columns.notFound',
      /Column nope not found in table in\.c-shop\.users/,
    );
    assertError(
      await post('columns/in.c-shop.users.nope', { provider: 'p', metadata: [] }),
      404,
      'storage.columns.notFound',
      /nope/,
    );
    assertError(
      await post('tables/in.c-shop.none', { provider: 'p', metadata: [] }),
      404,
      'storage.tables.notFound',
      /does not exist/,
    );
    assertError(
      await post('buckets/in.c-none', { provider: 'p', metadata: [] }),
      404,
      'storage.buckets.notFound',
      /does not exist/,
    );
    // an id that cannot be one: not found, the reason said, control characters escaped
    assertError(
      await server().get(`${S}/columns/${encodeURIComponent('in.c-shop.users\u001b[2J')}/metadata`, { token }),
      404,
      'storage.tables.notFound',
      /control or invisible/,
    );
    assertError(
      await server().post(`${S}/tables/in.c-shop.users/metadata`, { token, rawJson: '["not", "an object"]' }),
      400,
      'storage.metadata.invalidParameter',
      /must be an object/,
    );
    // none of it was stored
    const detail = (await server().get(`${S}/tables/in.c-shop.users`, { token })).body;
    assert.deepEqual([detail.metadata, detail.columnMetadata, detail.bucket.metadata], [[], [], []]);
  });

  it('keeps odd column names exactly: "__proto__", digits, dots and quotes are columns like any other', async () => {
    await load(server(), token, 'in.c-shop.odd', [['__proto__', '0', 'a.b', 'say "hi"']]);
    // raw JSON: "__proto__" is an own key of the body, as any client sends it
    const set = await server().post(`${S}/tables/in.c-shop.odd/metadata`, {
      token,
      rawJson:
        '{"provider": "user", "columnsMetadata": {"__proto__": [{"key": "k", "value": "proto"}], "0": [{"key": "k", "value": "zero"}], "a.b": [{"key": "k", "value": "dots"}]}}',
    });
    assert.equal(set.status, 201, set.text);
    const answer = await server().get(`${S}/tables/in.c-shop.odd`, { token });
    const detail = answer.body;
    assert.deepEqual(Object.keys(detail.columnMetadata).sort(), ['0', '__proto__', 'a.b']);
    // in the table's column order on the wire (a JavaScript object would put "0" first)
    const at = (name: string) => answer.text.indexOf(`"${name}":[{"id"`);
    assert.ok(at('__proto__') > 0 && at('__proto__') < at('0') && at('0') < at('a.b'), answer.text);
    assert.deepEqual(items(detail.columnMetadata.__proto__), ['user:k=proto']);
    const quoted = await server().post(`${S}/columns/${encodeURIComponent('in.c-shop.odd.say "hi"')}/metadata`, {
      token,
      json: { provider: 'user', metadata: [{ key: 'k', value: 'quotes' }] },
    });
    assert.deepEqual(items(quoted.body), ['user:k=quotes']);
    assert.deepEqual(items((await server().get(`${S}/columns/in.c-shop.odd.a.b/metadata`, { token })).body), [
      'user:k=dots',
    ]);
  });

  it('a read-only token reads but may not set or delete; another project sees none of it', async () => {
    const set = await server().post(`${S}/tables/in.c-shop.users/metadata`, {
      token,
      json: { provider: 'user', metadata: [{ key: 'k', value: 'v' }] },
    });
    const id = set.body.metadata[0].id;
    const info = await server().backend.authenticate(token);
    const readOnly = await server().createToken({ project: info!.projectName, readOnly: true });
    assert.deepEqual(items((await server().get(`${S}/tables/in.c-shop.users/metadata`, { token: readOnly })).body), [
      'user:k=v',
    ]);
    for (const res of [
      await server().post(`${S}/tables/in.c-shop.users/metadata`, {
        token: readOnly,
        json: { provider: 'user', metadata: [{ key: 'k', value: 'changed' }] },
      }),
      await server().post(`${S}/columns/in.c-shop.users.id/metadata`, {
        token: readOnly,
        json: { provider: 'user', metadata: [{ key: 'k', value: 'new' }] },
      }),
      await server().delete(`${S}/tables/in.c-shop.users/metadata/${id}`, { token: readOnly }),
    ])
      assertError(res, 403, 'accessDenied', /read-only/);

    const stranger = await server().createToken({ project: `metadata-stranger-${project}` });
    assertError(
      await server().get(`${S}/tables/in.c-shop.users/metadata`, { token: stranger }),
      404,
      'storage.tables.notFound',
      /does not exist/,
    );
    assertError(
      await server().delete(`${S}/tables/in.c-shop.users/metadata/${id}`, { token: stranger }),
      404,
      'storage.tables.notFound',
      /does not exist/,
    );
    assertError(
      await server().get(`${S}/buckets/in.c-shop/metadata`, { token: null }),
      401,
      '',
      /Access token must be set/,
    );
    assert.deepEqual(items((await server().get(`${S}/tables/in.c-shop.users/metadata`, { token })).body), ['user:k=v']);
  });

  it('deleting a table or its bucket deletes their metadata; a table made again starts without any', async () => {
    await server().post(`${S}/tables/in.c-shop.users/metadata`, {
      token,
      json: {
        provider: 'user',
        metadata: [{ key: 'k', value: 'v' }],
        columnsMetadata: { id: [{ key: 'k', value: 'v' }] },
      },
    });
    await server().post(`${S}/buckets/in.c-shop/metadata`, {
      token,
      json: { provider: 'user', metadata: [{ key: 'b', value: 'v' }] },
    });
    assert.equal((await server().delete(`${S}/tables/in.c-shop.users`, { token })).status, 204);
    assertError(
      await server().get(`${S}/tables/in.c-shop.users/metadata`, { token }),
      404,
      'storage.tables.notFound',
      /does not exist/,
    );
    assertError(
      await server().get(`${S}/columns/in.c-shop.users.id/metadata`, { token }),
      404,
      'storage.tables.notFound',
      /no table/,
    );
    await load(server(), token, 'in.c-shop.users', [['id'], ['1']]);
    const again = (await server().get(`${S}/tables/in.c-shop.users`, { token })).body;
    assert.deepEqual([again.metadata, again.columnMetadata], [[], []]);
    assert.deepEqual(items(again.bucket.metadata), ['user:b=v']);
    assert.equal((await server().delete(`${S}/buckets/in.c-shop?force=1`, { token })).status, 204);
    await server().post(`${S}/buckets`, { token, json: { name: 'shop' } });
    assert.deepEqual((await server().get(`${S}/buckets/in.c-shop/metadata`, { token })).body, []);
    const stored = await server().backend.db.get<{ n: unknown }>(
      "SELECT COUNT(*) AS n FROM storage_metadata WHERE bucket_id = 'in.c-shop' AND project_id = ?",
      [(await server().backend.authenticate(token))!.projectId],
    );
    assert.equal(Number(stored?.n), 0);
  });
});
