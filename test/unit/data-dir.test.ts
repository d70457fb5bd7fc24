import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readDataDir } from '../../src/extractor/config/data-dir.js';

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
    assert.equal((await readDataDir(dir)).state.size, 0);
  });

  it('reads a JSON list as a PHP array with index keys', async () => {
    await writeFile(path.join(dir, 'in', 'state.json'), '["a", {"b": 1}]');
    assert.deepEqual([...(await readDataDir(dir)).state.keys()], ['0', '1']);
  });

  it('refuses a state that is neither object nor array, naming the file (GE crashes on it)', async () => {
    await writeFile(path.join(dir, 'in', 'state.json'), 'null');
    await assert.rejects(readDataDir(dir), /state file .*state\.json must hold a JSON object or array/);
  });
});
