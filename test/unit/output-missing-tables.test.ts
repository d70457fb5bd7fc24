import assert from 'node:assert/strict';
import { runMapped, runOutput } from '../support/output.js';

const withPk = '{"users":{"id":{"mapping":{"destination":"id","primaryKey":true}},"name":"name","tags":{"type":"table","destination":"tags","tableMapping":{"":"tag"}}}}';

describe('MissingTableHelper: header-only mapped tables (ge-output.md §12.2, §4.2)', () => {
  it('writes mapped tables no job produced, with incremental first in the manifest', async () => {
    const { files, written } = await runMapped(withPk, [{ rows: '[]', type: 'users' }]);
    assert.equal(files.get('b.users'), '"id","name"\n');
    assert.equal(files.get('b.users.manifest'), '{"destination":"in.c-b.users","incremental":false,"primary_key":["id"]}');
    assert.equal(files.get('b.tags'), '"tag","users_pk"\n');
    assert.equal(files.get('b.tags.manifest'), '{"incremental":false,"destination":"in.c-b.tags"}');
    assert.deepEqual(written, ['b.users', 'b.tags']);
  });

  it('keeps the link column in the mapper header but never in a helper header', async () => {
    const { files } = await runMapped('{"users":{"id":"id","name":"name","tags":{"type":"table","destination":"tags","tableMapping":{"":"tag"}}}}', [
      { rows: '[]', type: 'users' },
    ]);
    assert.equal(files.get('b.users'), '"id","name","tags"\n');
    const helperOnly = await runMapped('{"users":{"id":"id","tags":{"type":"table","destination":"tags","tableMapping":{"":"tag"}}}}', []);
    assert.equal(helperOnly.files.get('b.users'), '"id"\n');
    assert.equal(helperOnly.files.get('b.users.manifest'), '{"incremental":false,"destination":"in.c-b.users"}');
  });

  it('fills the child tables of a mapping whose rows had no child values', async () => {
    const { files } = await runMapped('{"users":{"id":"id","tags":{"type":"table","destination":"tags","tableMapping":{"":"tag"}}}}', [
      { rows: '[{"id":1},{"id":2,"tags":[]}]', type: 'users' },
    ]);
    assert.equal(files.get('b.users'), '"id","tags"\n"1",""\n"2",""\n');
    assert.equal(files.get('b.tags'), '"tag","users_pk"\n');
    assert.equal(files.get('b.tags.manifest'), '{"incremental":false,"destination":"in.c-b.tags"}');
    // with a primary key the mapper itself writes a phantom row, so there is nothing to fill
    const keyed = await runMapped(withPk, [{ rows: '[{"id":1,"name":"A"}]', type: 'users' }]);
    assert.equal(keyed.files.get('b.tags'), '"tag","users_pk"\n"","1"\n');
    assert.equal(keyed.files.get('b.tags.manifest'), '{"destination":"in.c-b.tags","incremental":false}');
  });

  it('writes an unused mapping as a header-only table', async () => {
    const { files } = await runMapped('{"users":{"id":"id"},"other":{"x":"x"}}', [{ rows: '[{"id":1}]', type: 'users' }]);
    assert.equal(files.get('b.other'), '"x"\n');
    assert.equal(files.get('b.other.manifest'), '{"incremental":false,"destination":"in.c-b.other"}');
  });

  it('names the parent key column as configured and declares primary keys', async () => {
    const { files } = await runMapped(
      '{"users":{"id":{"mapping":{"destination":"id","primaryKey":true}},"contacts":{"type":"table","destination":"user-contact","parentKey":{"primaryKey":true,"destination":"userId"},"tableMapping":{"email":"email","addresses.0":{"type":"table","destination":"address","parentKey":{"primaryKey":true},"tableMapping":{"street":"street"}}}}}}',
      [],
    );
    assert.equal(files.get('b.user-contact'), '"email","userId"\n');
    assert.equal(files.get('b.user-contact.manifest'), '{"incremental":false,"destination":"in.c-b.user-contact","primary_key":["userId"]}');
    assert.equal(files.get('b.address'), '"street","user-contact_pk"\n');
    assert.equal(files.get('b.address.manifest'), '{"incremental":false,"destination":"in.c-b.address","primary_key":["user-contact_pk"]}');
  });

  it("uses each config's own `incremental` attribute (not incrementalOutput) and bucket", async () => {
    const { files } = await runOutput([
      { bucket: 'one', mappings: '{"a":{"x":"x"}}', missingTableIncremental: 'true', incremental: false, batches: [] },
      { bucket: null, mappings: '{"c":{"z":"z"}}', incremental: true, batches: [] },
    ]);
    assert.equal(files.get('one.a.manifest'), '{"incremental":true,"destination":"in.c-one.a"}');
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

  it('refuses an unknown mapping type', async () => {
    await assert.rejects(runMapped('{"a":{"x":{"type":"date","mapping":{"destination":"x"}}}}', []), /^UserError: Invalid mapping type "date"\.$/);
  });
});
