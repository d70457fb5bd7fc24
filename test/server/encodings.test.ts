import assert from 'node:assert/strict';
import {
  BRANCH,
  COMPONENT,
  configsPath,
  describeEachBackend,
  TestServer,
  useTestServer,
} from '../support/storage-api-server.js';

describeEachBackend('server: request encodings and limits', (backend) => {
  const server = useTestServer({ backend });

  it('reads form bodies: JSON strings in configuration/state, bracket arrays, string booleans', async () => {
    const created = await server().post(configsPath(), {
      form: {
        name: 'Form',
        configurationId: 'form-1',
        configuration: '{"b":[],"a":{"x":1.0}}',
        state: '{"s":{}}',
        isDisabled: 'true',
        description: 'd',
      },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.isDisabled, true);
    assert.ok(created.text.includes('"configuration":{"b":[],"a":{"x":1.0}}'), created.text);
    assert.ok(created.text.includes('"state":{"s":{}}'));
    for (const rowId of ['r1', 'r2', 'r3']) {
      assert.equal(
        (await server().post(configsPath('form-1', 'rows'), { form: `rowId=${rowId}&configuration=%7B%7D` })).status,
        201,
      );
    }
    const sorted = await server().put(configsPath('form-1'), {
      form: 'rowsSortOrder[0]=r3&rowsSortOrder[1]=r1&rowsSortOrder[2]=r2&isDisabled=0',
    });
    assert.equal(sorted.status, 200, sorted.text);
    assert.deepEqual(sorted.body.rowsSortOrder, ['r3', 'r1', 'r2']);
    assert.equal(sorted.body.isDisabled, false);
    const plus = await server().put(configsPath('form-1'), { form: 'description=with+space%26amp' });
    assert.equal(plus.body.description, 'with space&amp');
  });

  it('orders more than 20 bracket indexes correctly', async () => {
    const c = await server().createConfig({ name: 'Many rows' });
    const ids = Array.from({ length: 25 }, (_, i) => `row-${String(i).padStart(2, '0')}`);
    for (const rowId of ids) await server().createRow(c.id, { rowId });
    const reversed = [...ids].reverse();
    const form = reversed.map((id, i) => `rowsSortOrder[${i}]=${id}`).join('&');
    const res = await server().put(configsPath(c.id), { form });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.rowsSortOrder, reversed);
  });

  it('coerces isDisabled from true/false/"true"/"false"/1/0/"1"/"0" and refuses others', async () => {
    const cases: Array<[unknown, boolean]> = [
      [true, true],
      [false, false],
      ['true', true],
      ['false', false],
      [1, true],
      [0, false],
      ['1', true],
      ['0', false],
    ];
    for (const [value, expected] of cases) {
      const c = await server().post(configsPath(), { json: { name: 'flag', isDisabled: value } });
      assert.equal(c.status, 201);
      assert.equal(c.body.isDisabled, expected, JSON.stringify(value));
    }
    const bad = await server().post(configsPath(), { json: { name: 'flag', isDisabled: 'maybe' } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /isDisabled/);
  });

  it('accepts configuration and state as JSON-encoded strings in JSON bodies; refuses invalid ones', async () => {
    const res = await server().post(configsPath(), {
      json: { name: 'Strings', configuration: '{"a":{"b":[]}}', state: '{"c":1}' },
    });
    assert.equal(res.status, 201);
    assert.ok(res.text.includes('"configuration":{"a":{"b":[]}}'));
    assert.deepEqual(res.body.state, { c: 1 });

    const badConfig = await server().post(configsPath(), { json: { name: 'Bad', configuration: 'not json' } });
    assert.equal(badConfig.status, 400);
    assert.equal(badConfig.body.code, 'validation.invalidConfigurationFormat');
    assert.match(badConfig.body.error, /configuration: This value should be valid JSON/);
    const badState = await server().post(configsPath(), { form: { name: 'Bad', state: '{oops' } });
    assert.equal(badState.status, 400);
    assert.equal(badState.body.code, 'validation.invalidStateFormat');
    const scalar = await server().post(configsPath(), { json: { name: 'Bad', configuration: 5 } });
    assert.equal(scalar.status, 400);
    assert.equal(scalar.body.code, 'validation.invalidConfigurationFormat');
    const badName = await server().post(configsPath(), { json: { name: { nested: true } } });
    assert.equal(badName.status, 400);
    assert.match(badName.body.error, /name: This value should be of type string/);
    const listed = (await server().get(configsPath())).body.map((c: { name: string }) => c.name);
    assert.equal(listed.includes('Bad'), false, 'nothing was created by refused requests');
  });

  it('keeps a JSON list as configuration', async () => {
    const res = await server().post(configsPath(), { json: { name: 'List', configuration: ['a', []] } });
    assert.equal(res.status, 201);
    assert.ok(res.text.includes('"configuration":["a",[]]'));
  });

  it('answers malformed JSON with 400 naming the problem', async () => {
    const res = await server().post(configsPath(), { rawJson: '{"name": "x",}' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation.invalidJson');
    assert.match(res.body.error, /not valid JSON.*line \d+, column \d+/);
    const notObject = await server().post(configsPath(), { rawJson: '"just a string"' });
    assert.equal(notObject.status, 400);
    assert.match(notObject.body.error, /must be a JSON object/);
  });

  it('treats an empty body, {} and [] alike', async () => {
    const c = await server().createConfig({ name: 'Empty bodies' });
    await server().delete(configsPath(c.id));
    const restored = await server().post(configsPath(c.id, 'restore'));
    assert.equal(restored.status, 200);
    for (const rawJson of ['{}', '[]', '']) {
      const res = await server().put(configsPath(c.id), { rawJson });
      assert.equal(res.status, 200, `body ${JSON.stringify(rawJson)}`);
      assert.equal(res.body.version, restored.body.version);
    }
  });

  it('sniffs a body sent without Content-Type and refuses other media types with 415', async () => {
    const json = await server().post(configsPath(), { body: '{"name":"No type"}' });
    assert.equal(json.status, 201);
    assert.equal(json.body.name, 'No type');
    const form = await server().post(configsPath(), { body: 'name=No+type+form' });
    assert.equal(form.status, 201);
    assert.equal(form.body.name, 'No type form');
    const text = await server().post(configsPath(), { body: 'name=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(text.status, 415);
    assert.equal(text.body.code, 'storage.unsupportedMediaType');
    assert.match(text.body.error, /text\/plain/);
  });

  it('accepts JSON with a charset parameter', async () => {
    const res = await server().post(configsPath(), {
      body: '{"name":"Charset ✓"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.name, 'Charset ✓');
  });

  it('answers a body over the limit with 413 storage.requestTooLarge', async () => {
    const small = await TestServer.start({ bodyLimit: 1024, backend });
    try {
      const res = await small.post(`${BRANCH}/components/${COMPONENT}/configs`, {
        json: { name: 'Big', configuration: { text: 'x'.repeat(2000) } },
      });
      assert.equal(res.status, 413);
      assert.equal(res.body.code, 'storage.requestTooLarge');
      assert.match(res.body.error, /larger than the server's limit of 1024 bytes/);
      const ok = await small.post(`${BRANCH}/components/${COMPONENT}/configs`, { json: { name: 'Small' } });
      assert.equal(ok.status, 201);
    } finally {
      await small.close();
    }
  });
});
