import assert from 'node:assert/strict';
import {
  dataFolderOfRun,
  defaultDataDir,
  insideContainer,
  type DataDirChoice,
} from '../../src/cli/options/data-dir-default.js';

describe('the default data folder', () => {
  /** A machine where exactly these paths exist. */
  const machine =
    (...files: string[]) =>
    (file: string) =>
      files.includes(file);
  const noFiles = machine();

  it('tells a container by /.dockerenv or KBC_DATADIR; GEX_CONTAINER overrides the guess', () => {
    assert.equal(insideContainer({}, noFiles), false);
    assert.equal(insideContainer({}, machine('/.dockerenv')), true);
    assert.equal(insideContainer({ KBC_DATADIR: '/mnt/d' }, noFiles), true);
    assert.equal(insideContainer({ GEX_CONTAINER: '0' }, machine('/.dockerenv')), false);
    assert.equal(insideContainer({ GEX_CONTAINER: '1' }, noFiles), true);
  });

  it('is $KBC_DATADIR, else an existing ./data (inside a container too), else an existing /data inside a container, else ./data', () => {
    const dir = (env: NodeJS.ProcessEnv, exists: (f: string) => boolean) => defaultDataDir(env, exists).dir;
    assert.equal(dir({ KBC_DATADIR: '/mnt/d' }, machine('./data', '/data')), '/mnt/d');
    // where the user stands wins: a development container with ./data next to the project
    assert.equal(dir({}, machine('/.dockerenv', './data', '/data')), './data');
    assert.equal(dir({ GEX_CONTAINER: '1' }, machine('./data', '/data')), './data');
    // Keboola's runner mounts /data: used when there is no ./data
    assert.equal(dir({}, machine('/.dockerenv', '/data')), '/data');
    // /data is never made at the root: a container without either gets ./data, as a workstation does
    assert.equal(dir({}, machine('/.dockerenv')), './data');
    assert.equal(dir({}, machine('/data')), './data', 'outside a container /data is not used');
    assert.equal(dir({}, noFiles), './data');
  });

  it('says why it chose the folder, and whether it exists', () => {
    assert.deepEqual(defaultDataDir({}, machine('/.dockerenv', './data')), {
      dir: './data',
      source: './data exists in the working folder',
      exists: true,
    });
    assert.deepEqual(defaultDataDir({}, machine('/.dockerenv', '/data')), {
      dir: '/data',
      source: 'there is no ./data in the working folder, and inside a container the data folder is /data',
      exists: true,
    });
    assert.deepEqual(defaultDataDir({}, machine('/.dockerenv')), {
      dir: './data',
      source: 'there is neither ./data in the working folder nor /data (the data folder inside a container)',
      exists: false,
    });
    assert.deepEqual(defaultDataDir({}, noFiles), {
      dir: './data',
      source: 'there is no ./data in the working folder',
      exists: false,
    });
  });

  it('a data-folder run: the folder given as it is; a default that does not exist is a user error naming what was looked for', () => {
    assert.equal(dataFolderOfRun('/given/even/if/missing', {}, noFiles), '/given/even/if/missing');
    const heard: DataDirChoice[] = [];
    assert.equal(
      dataFolderOfRun(undefined, {}, machine('/.dockerenv', './data', '/data'), (c) => heard.push(c)),
      './data',
    );
    assert.equal(heard[0].source, './data exists in the working folder');
    assert.throws(() => dataFolderOfRun(undefined, {}, noFiles), {
      name: 'UserError',
      message:
        /^No data folder: --data-dir was not given and \.\/data \(\/.*\/data\) does not exist\. Run gex in the folder that holds data\//,
    });
    assert.throws(() => dataFolderOfRun(undefined, {}, machine('/.dockerenv')), {
      message:
        /--data-dir was not given and neither \.\/data \(\/.*\/data\) nor \/data \(the data folder inside a container\) exists\./,
    });
    assert.throws(() => dataFolderOfRun(undefined, { KBC_DATADIR: '/x\ny' }, noFiles), {
      message: /\$KBC_DATADIR names "\/x\\ny", which does not exist/,
    });
    assert.deepEqual(defaultDataDir({ KBC_DATADIR: '/mnt/d' }, machine('/mnt/d')), {
      dir: '/mnt/d',
      source: '$KBC_DATADIR names it',
      exists: true,
    });
  });
});
