import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { DataFolder } from '../../src/extractor/data-folder.js';
import { decodeJson, stringifyExact, type JsonObject } from '../../src/json/index.js';

describe('data folder: in/state.json', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-data-dir-'));
    await mkdir(path.join(dir, 'in'));
    await writeFile(path.join(dir, 'config.json'), '{"parameters": {"api": {}}}');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads [] (how PHP writes an empty state) as no state, as GE does', async () => {
    await writeFile(path.join(dir, 'in', 'state.json'), '[]');
    assert.equal((await new DataFolder(dir).read()).state.size, 0);
  });

  it('reads a JSON list as a PHP array with index keys', async () => {
    await writeFile(path.join(dir, 'in', 'state.json'), '["a", {"b": 1}]');
    assert.deepEqual([...(await new DataFolder(dir).read()).state.keys()], ['0', '1']);
  });

  it('refuses a state that is neither object nor array, naming the file (GE crashes on it)', async () => {
    await writeFile(path.join(dir, 'in', 'state.json'), 'null');
    await assert.rejects(new DataFolder(dir).read(), /state file .*state\.json must hold a JSON object or array/);
  });
});

describe('data folder: what the runner writes is what the extractor reads', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-data-folder-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writeInput → read gives back parameters, image parameters, authorization, action and state', async () => {
    const folder = new DataFolder(dir);
    const config = decodeJson(
      '{"storage":{},"parameters":{"api":{"baseUrl":"http://x/"},"n":1.0},"image_parameters":{"a":1},"authorization":{"oauth_api":{}},"action":"run"}',
    ) as JsonObject;
    const state = decodeJson('{"time":{"previousStart":5},"big":9007199254740993}') as JsonObject;
    await folder.writeInput(config, state);
    const input = await folder.read();
    assert.equal(stringifyExact(input.parameters), '{"api":{"baseUrl":"http://x/"},"n":1.0}');
    assert.equal(stringifyExact(input.imageParameters), '{"a":1}');
    assert.equal(stringifyExact(input.authorization), '{"oauth_api":{}}');
    assert.equal(input.action, 'run');
    assert.equal(stringifyExact(input.state), '{"time":{"previousStart":5},"big":9007199254740993}');
  });

  it('writes out/state.json as GE does (an empty object as [])', async () => {
    const folder = new DataFolder(dir);
    await folder.writeOutputState(decodeJson('{"time":{"previousStart":1},"empty":{},"s":"é/"}') as JsonObject);
    assert.equal(
      await readFile(path.join(dir, 'out', 'state.json'), 'utf8'),
      '{"time":{"previousStart":1},"empty":[],"s":"\\u00e9\\/"}',
    );
  });

  it('keeps every path inside the folder: a table name cannot leave out/tables', () => {
    const folder = new DataFolder(dir);
    assert.equal(folder.tableFile('in.c-a.users'), path.join(dir, 'out', 'tables', 'in.c-a.users'));
    assert.throws(() => folder.tableFile('../../config.json'), /outside|inside/);
  });
});
