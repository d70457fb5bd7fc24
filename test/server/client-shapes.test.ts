import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProjectTables } from '../../src/store/tables/index.js';
import { COMPONENT, describeEachBackend, useTestServer, type Json } from '../support/storage-api-server.js';

/**
 * Replays of the request shapes the official clients send (docs/storage-api.md#request-bodies): each client
 * runs a whole configuration lifecycle in its own project and every answer is checked.
 */
describeEachBackend('server: official client request shapes', (backend) => {
  const server = useTestServer({ backend });

  describe('PHP client (JSON with explicit nulls, branch/default prefix)', () => {
    const B = `/v2/storage/branch/default/components/${COMPONENT}/configs`;
    let token: string;
    before(async () => {
      token = await server().createToken({ project: 'php' });
    });

    it('creates, lists, updates, versions, rolls back, copies and deletes configurations and rows', async () => {
      const nulls = {
        description: null,
        configurationId: null,
        configuration: null,
        state: null,
        changeDescription: null,
        isDisabled: null,
      };
      const empty = await server().post(B, { token, json: { name: 'PHP empty', ...nulls } });
      assert.equal(empty.status, 201, empty.text);
      assert.equal(empty.body.description, '');
      assert.equal(empty.body.isDisabled, false);
      assert.equal(empty.body.changeDescription, 'Configuration created');
      assert.ok(empty.text.includes('"configuration":{}') && empty.text.includes('"state":{}'));
      assert.match(empty.body.id, /^\d+$/);

      const created = await server().post(B, {
        token,
        json: {
          ...nulls,
          name: 'PHP main',
          configurationId: 'php-main',
          configuration: '{"parameters":{"page":1}}',
          state: { s: 1 },
          isDisabled: false,
        },
      });
      assert.equal(created.status, 201);
      assert.deepEqual(created.body.configuration, { parameters: { page: 1 } });

      const components = await server().get(
        '/v2/storage/branch/default/components?include=&isDeleted=0&componentType=',
        { token },
      );
      assert.equal(components.status, 200);
      assert.deepEqual(
        components.body.map((c: Json) => c.id),
        [COMPONENT],
      );
      assert.deepEqual(
        components.body[0].configurations.map((c: Json) => c.id).sort(),
        [empty.body.id, 'php-main'].sort(),
      );
      assert.equal('configuration' in components.body[0].configurations[0], false);
      const configs = await server().get(`${B}?isDeleted=0`, { token });
      assert.equal(configs.body.length, 2);

      const updated = await server().put(`${B}/php-main`, {
        token,
        json: { name: 'PHP main 2', configuration: '{"parameters":{"page":2}}', isDisabled: false },
      });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.version, 2);
      assert.equal(updated.body.changeDescription, 'Configuration updated');
      const state = await server().put(`${B}/php-main/state`, { token, json: { state: '{"cursor":9}' } });
      assert.equal(state.status, 200);
      assert.deepEqual(state.body.state, { cursor: 9 });
      assert.equal(state.body.version, 2);

      const rowNulls = {
        rowId: null,
        configuration: null,
        state: null,
        changeDescription: null,
        description: null,
        isDisabled: null,
      };
      const row = await server().post(`${B}/php-main/rows`, {
        token,
        json: { ...rowNulls, name: 'PHP row', configuration: '{"table":"a"}' },
      });
      assert.equal(row.status, 201, row.text);
      assert.equal(row.body.name, 'PHP row');
      assert.match(row.body.id, /^\d+$/);
      assert.equal(row.body.changeDescription, `Row ${row.body.id} added`);
      const rowUpdated = await server().put(`${B}/php-main/rows/${row.body.id}`, {
        token,
        json: { configuration: '{"table":"b"}' },
      });
      assert.equal(rowUpdated.body.version, 2);
      const rowState = await server().put(`${B}/php-main/rows/${row.body.id}/state`, { token, json: { state: '{}' } });
      assert.equal(rowState.status, 200);

      const versions = await server().get(`${B}/php-main/versions?include=`, { token });
      assert.deepEqual(
        versions.body.map((v: Json) => v.version),
        [4, 3, 2, 1],
      );
      assert.equal('name' in versions.body[0], false, 'include= means none');
      const rowVersions = await server().get(`${B}/php-main/rows/${row.body.id}/versions?include=`, { token });
      assert.deepEqual(
        rowVersions.body.map((v: Json) => [v.version, 'configuration' in v]),
        [
          [2, false],
          [1, false],
        ],
      );
      const rowVersion = await server().get(`${B}/php-main/rows/${row.body.id}/versions/1`, { token });
      assert.deepEqual(rowVersion.body.configuration, { table: 'a' });

      const rolledBack = await server().post(`${B}/php-main/versions/2/rollback`, {
        token,
        json: { changeDescription: null },
      });
      assert.equal(rolledBack.status, 201);
      assert.deepEqual(rolledBack.body, { version: 5 });
      const afterRollback = await server().get(`${B}/php-main`, { token });
      assert.equal(afterRollback.body.changeDescription, 'Rollback to version 2');
      assert.deepEqual(afterRollback.body.rows, [], 'version 2 had no rows');
      assert.deepEqual(afterRollback.body.state, { cursor: 9 });

      const copy = await server().post(`${B}/php-main/versions/4/create`, {
        token,
        json: { name: 'PHP copy', description: null, changeDescription: null },
      });
      assert.equal(copy.status, 201);
      assert.equal(copy.body.changeDescription, 'Copied from configuration "PHP main 2" (php-main) version 4');
      assert.deepEqual(
        copy.body.rows.map((r: Json) => r.id),
        [row.body.id],
      );

      const rowRollback = await server().post(`${B}/${copy.body.id}/rows/${row.body.id}/versions/1/rollback`, {
        token,
        json: { changeDescription: null },
      });
      assert.equal(rowRollback.status, 201);
      assert.equal(rowRollback.body.version, 2);
      assert.equal(rowRollback.body.changeDescription, 'Rollback to version 1');
      const rowCopy = await server().post(`${B}/${copy.body.id}/rows/${row.body.id}/versions/2/create`, {
        token,
        json: { targetConfigId: null, changeDescription: null },
      });
      assert.equal(rowCopy.status, 201);
      assert.equal(rowCopy.body.version, 1);

      const meta = await server().post(`${B}/php-main/metadata`, {
        token,
        json: { metadata: [{ key: 'KBC.createdBy', value: 'php' }] },
      });
      assert.equal(meta.status, 201);

      const rowDelete = await server().delete(`${B}/${copy.body.id}/rows/${rowCopy.body.id}`, {
        token,
        json: { changeDescription: null },
      });
      assert.equal(rowDelete.status, 204);
      assert.equal(
        (await server().get(`${B}/${copy.body.id}`, { token })).body.changeDescription,
        `Row ${rowCopy.body.id} deleted`,
      );

      assert.equal((await server().delete(`${B}/php-main`, { token, json: {} })).status, 204);
      const restored = await server().post(`${B}/php-main/restore`, { token, json: {} });
      assert.equal(restored.status, 200);
      assert.equal(restored.body.changeDescription, 'Configuration restored');
      assert.equal((await server().delete(`${B}/php-main`, { token })).status, 204);
      const deleted = await server().get(`${B}?isDeleted=1`, { token });
      assert.deepEqual(
        deleted.body.map((c: Json) => c.id),
        ['php-main'],
      );
    });
  });

  describe('Python client (plain JSON, "" for unset texts)', () => {
    const B = `/v2/storage/branch/default/components/${COMPONENT}/configs`;
    let token: string;
    before(async () => {
      token = await server().createToken({ project: 'python' });
    });

    it('creates, lists, updates, versions, rolls back, copies and deletes configurations and rows', async () => {
      const created = await server().post(B, {
        token,
        json: {
          name: 'Py',
          description: '',
          configuration: { parameters: { api: { baseUrl: 'https://x' } } },
          state: {},
          changeDescription: '',
          isDisabled: false,
          configurationId: 'py-1',
        },
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.id, 'py-1');
      assert.equal(
        created.body.changeDescription,
        'Configuration created',
        'an empty changeDescription takes the default',
      );

      const list = await server().get(B, { token });
      assert.deepEqual(
        list.body.map((c: Json) => c.id),
        ['py-1'],
      );
      assert.deepEqual(list.body[0].configuration, { parameters: { api: { baseUrl: 'https://x' } } });
      const detail = await server().get(`${B}/py-1`, { token });
      assert.deepEqual(detail.body, created.body);

      const updated = await server().put(`${B}/py-1`, {
        token,
        json: { configuration: { parameters: { api: { baseUrl: 'https://y' } } }, changeDescription: 'new base URL' },
      });
      assert.equal(updated.body.version, 2);
      assert.equal(updated.body.changeDescription, 'new base URL');
      const row = await server().post(`${B}/py-1/rows`, {
        token,
        json: { rowId: 'py-row', name: 'first', configuration: { n: 1 } },
      });
      assert.equal(row.status, 201);
      await server().put(`${B}/py-1/rows/py-row`, { token, json: { configuration: { n: 2 } } });

      const versions = await server().get(`${B}/py-1/versions`, { token });
      assert.deepEqual(
        versions.body.map((v: Json) => [v.version, v.name]),
        [
          [4, 'Py'],
          [3, 'Py'],
          [2, 'Py'],
          [1, 'Py'],
        ],
      );
      const rowVersions = await server().get(`${B}/py-1/rows/py-row/versions`, { token });
      assert.deepEqual(
        rowVersions.body.map((v: Json) => v.configuration),
        [{ n: 2 }, { n: 1 }],
        'include absent = configuration',
      );

      const rollback = await server().post(`${B}/py-1/versions/3/rollback`, { token, json: {} });
      assert.deepEqual(rollback.body, { version: 5 });
      assert.deepEqual((await server().get(`${B}/py-1/rows/py-row`, { token })).body.configuration, { n: 1 });
      const rowRollback = await server().post(`${B}/py-1/rows/py-row/versions/2/rollback`, { token, json: {} });
      assert.equal(rowRollback.status, 201);
      assert.deepEqual(rowRollback.body.configuration, { n: 2 });

      const copy = await server().post(`${B}/py-1/versions/1/create`, { token, json: { name: 'Py copy' } });
      assert.equal(copy.status, 201);
      assert.deepEqual(copy.body.configuration, { parameters: { api: { baseUrl: 'https://x' } } });
      const rowCopy = await server().post(`${B}/py-1/rows/py-row/versions/1/create`, {
        token,
        json: { targetConfigId: copy.body.id },
      });
      assert.equal(rowCopy.status, 201);
      assert.equal((await server().get(`${B}/${copy.body.id}/rows`, { token })).body.length, 1);

      assert.equal((await server().delete(`${B}/py-1/rows/py-row`, { token })).status, 204);
      assert.equal((await server().delete(`${B}/py-1`, { token })).status, 204);
      assert.equal((await server().get(`${B}/py-1`, { token })).status, 404);
      assert.deepEqual(
        (await server().get(B, { token })).body.map((c: Json) => c.id),
        [copy.body.id],
      );
    });
  });

  describe('Go client (form bodies, numeric branch id)', () => {
    let token: string;
    before(async () => {
      token = await server().createToken({ project: 'go' });
    });

    it('creates, lists, updates, versions, rolls back, copies and deletes configurations and rows', async () => {
      const branches = await server().get('/v2/storage/dev-branches', { token });
      const branchId = branches.body.find((b: Json) => b.isDefault).id;
      const B = `/v2/storage/branch/${branchId}/components/${COMPONENT}/configs`;

      const created = await server().post(B, {
        token,
        // ConfigKey's branchId/componentId travel in the form too; the server ignores them
        form: `branchId=${branchId}&componentId=${COMPONENT}&configurationId=go-1&name=Go+config&description=&changeDescription=&isDisabled=false&configuration=${encodeURIComponent('{"parameters":{"x":[]}}')}`,
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.id, 'go-1');
      assert.ok(created.text.includes('"configuration":{"parameters":{"x":[]}}'));
      assert.equal(created.body.changeDescription, 'Configuration created');

      for (const rowId of ['r-b', 'r-a']) {
        const row = await server().post(`${B}/go-1/rows`, {
          token,
          form: `rowId=${rowId}&name=${rowId}&description=&changeDescription=&isDisabled=false&configuration=%7B%7D`,
        });
        assert.equal(row.status, 201, row.text);
      }
      const all = await server().get(`/v2/storage/branch/${branchId}/components?include=configuration,rows`, { token });
      assert.deepEqual(
        all.body[0].configurations[0].rows.map((r: Json) => r.id),
        ['r-a', 'r-b'],
      );

      const updated = await server().put(`${B}/go-1`, {
        token,
        form: 'rowsSortOrder[0]=r-b&rowsSortOrder[1]=r-a&changeDescription=reorder',
      });
      assert.equal(updated.status, 200, updated.text);
      assert.equal(updated.body.version, 4);
      assert.deepEqual(
        updated.body.rows.map((r: Json) => r.id),
        ['r-b', 'r-a'],
      );
      const disabled = await server().put(`${B}/go-1/rows/r-a`, { token, form: 'isDisabled=true&changeDescription=' });
      assert.equal(disabled.body.isDisabled, true);
      assert.equal(disabled.body.changeDescription, 'Row r-a changed');
      const rowState = await server().put(`${B}/go-1/rows/r-a/state`, {
        token,
        form: `state=${encodeURIComponent('{"last":1}')}`,
      });
      assert.deepEqual(rowState.body.state, { last: 1 });
      const meta = await server().post(`${B}/go-1/metadata`, {
        token,
        form: 'metadata[0][key]=KBC.KaC.meta&metadata[0][value]=x',
      });
      assert.equal(meta.status, 201);

      const versions = await server().get(`${B}/go-1/versions`, { token });
      assert.deepEqual(
        versions.body.map((v: Json) => v.changeDescription),
        ['Row r-a changed', 'reorder', 'Row r-a added', 'Row r-b added', 'Configuration created'],
      );
      const rollback = await server().post(`${B}/go-1/versions/4/rollback`, { token, form: 'changeDescription=undo' });
      assert.deepEqual(rollback.body, { version: 6 });
      const afterRollback = await server().get(`${B}/go-1`, { token });
      assert.equal(afterRollback.body.rows.find((r: Json) => r.id === 'r-a').isDisabled, false);
      assert.deepEqual(afterRollback.body.rows.find((r: Json) => r.id === 'r-a').state, { last: 1 });

      const copy = await server().post(`${B}/go-1/versions/6/create`, { token, form: 'name=Go+copy' });
      assert.equal(copy.status, 201);
      assert.deepEqual(copy.body.rowsSortOrder, ['r-b', 'r-a']);
      const rowCopy = await server().post(`${B}/go-1/rows/r-a/versions/1/create`, {
        token,
        form: `targetConfigId=${copy.body.id}`,
      });
      assert.equal(rowCopy.status, 201);
      const rowRollback = await server().post(`${B}/go-1/rows/r-b/versions/1/rollback`, { token, form: '' });
      assert.equal(rowRollback.status, 201);

      assert.equal(
        (await server().delete(`${B}/go-1/rows/r-b`, { token, form: 'changeDescription=drop+b' })).status,
        204,
      );
      assert.equal((await server().get(`${B}/go-1`, { token })).body.changeDescription, 'drop b');
      assert.equal((await server().delete(`${B}/go-1`, { token })).status, 204);
      assert.equal((await server().delete(`${B}/go-1`, { token })).status, 204);
      assert.equal(
        (await server().delete(`${B}/go-1`, { token })).status,
        404,
        'purged: the Go client treats this 404 as done',
      );
    });
  });

  describe('Python client kbcstorage (buckets and tables: form bodies, True/False flags, polled jobs)', () => {
    // kbcstorage's Endpoint sends these on every request; requests encodes `whereValues[]` as whereValues%5B%5D
    const headers = { 'Accept-Encoding': 'gzip', 'User-Agent': 'Keboola Storage API Python Client' };
    let token: string;
    before(async () => {
      token = await server().createToken({ project: 'python-tables' });
    });

    it('creates, lists, details, previews and deletes as Buckets and Tables do', async () => {
      // Buckets.create: data={'name','stage','description','backend': None} — requests drops None
      const created = await server().post('/v2/storage/buckets', {
        token,
        headers,
        form: 'name=py&stage=in&description=from+python',
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.id, 'in.c-py');

      const info = await server().backend.authenticate(token);
      const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-py-'));
      await writeFile(path.join(dir, 'users.csv'), 'id,name,city\n1,Ann,Oslo\n2,Bob,Rome\n');
      await new ProjectTables(server().backend.db, info!.projectId).load(path.join(dir, 'users.csv'), {
        destination: 'in.c-py.users',
      });
      await rm(dir, { recursive: true, force: true });

      const buckets = await server().get('/v2/storage/buckets', { token, headers });
      assert.deepEqual(
        buckets.body.map((b: Json) => b.id),
        ['in.c-py'],
      );
      const bucket = await server().get('/v2/storage/buckets/in.c-py', { token, headers });
      assert.equal(bucket.body.id, 'in.c-py');
      assert.equal(bucket.body.description, 'from python');
      const bucketTables = await server().get('/v2/storage/buckets/in.c-py/tables?include=attributes%2Ccolumns', {
        token,
        headers,
      });
      assert.deepEqual(
        bucketTables.body.map((t: Json) => t.id),
        ['in.c-py.users'],
      );
      const tables = await server().get('/v2/storage/tables?include=buckets%2Ccolumns', { token, headers });
      assert.deepEqual(
        tables.body.map((t: Json) => [t.id, t.bucket.id]),
        [['in.c-py.users', 'in.c-py']],
      );
      // Tables.export_to_file reads name and columns of the detail
      const detail = await server().get('/v2/storage/tables/in.c-py.users', { token, headers });
      assert.equal(detail.body.name, 'users');
      assert.deepEqual(detail.body.columns, ['id', 'name', 'city']);

      // Tables.preview: changedSince, whereValues[] + whereColumn + whereOperator ('eq' or 'neq'), columns joined by commas
      const preview = await server().get(
        '/v2/storage/tables/in.c-py.users/data-preview?changedSince=-1%20days&whereValues%5B%5D=Oslo&whereColumn=city&whereOperator=neq&columns=id%2Cname',
        { token, headers },
      );
      assert.equal(preview.status, 200);
      assert.equal(preview.text, '"id","name"\n"2","Bob"\n');

      // Tables.delete: DELETE without parameters; the answer is not read
      assert.equal((await server().delete('/v2/storage/tables/in.c-py.users', { token, headers })).status, 204);

      // Buckets.delete(asynchronous=False) and the default asynchronous one, which polls Jobs.detail until success or error
      await server().post('/v2/storage/buckets', { token, headers, form: 'name=sync&stage=out&description=' });
      assert.equal(
        (await server().delete('/v2/storage/buckets/out.c-sync?force=False&async=False', { token, headers })).status,
        204,
      );
      const job = await server().delete('/v2/storage/buckets/in.c-py?force=True&async=True', { token, headers });
      assert.equal(job.status, 202, job.text);
      assert.match(job.contentType ?? '', /^application\/json/);
      const polled = await server().get(`/v2/storage/jobs/${job.body.id}`, { token, headers });
      assert.equal(polled.status, 200);
      assert.ok(['success', 'error'].includes(polled.body.status));
      assert.equal(polled.body.status, 'success');
      assert.deepEqual((await server().get('/v2/storage/buckets', { token, headers })).body, []);
    });
  });
});
