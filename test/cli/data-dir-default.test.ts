import assert from 'node:assert/strict';
import { dataFolderOfRun, defaultDataDir, insideContainer } from '../../src/cli/data-dir-default.js';

describe('the default data folder', () => {
  const noFiles = () => false;
  const dockerenv = (file: string) => file === '/.dockerenv';

  it('tells a container by /.dockerenv or KBC_DATADIR; GEX_CONTAINER overrides the guess', () => {
    assert.equal(insideContainer({}, noFiles), false);
    assert.equal(insideContainer({}, dockerenv), true);
    assert.equal(insideContainer({ KBC_DATADIR: '/mnt/d' }, noFiles), true);
    assert.equal(insideContainer({ GEX_CONTAINER: '0' }, dockerenv), false);
    assert.equal(insideContainer({ GEX_CONTAINER: '1' }, noFiles), true);
  });

  it('is $KBC_DATADIR, else /data in a container, else ./data', () => {
    assert.equal(defaultDataDir({ KBC_DATADIR: '/mnt/d' }, noFiles).dir, '/mnt/d');
    assert.equal(defaultDataDir({}, dockerenv).dir, '/data');
    assert.equal(defaultDataDir({}, noFiles).dir, './data');
  });

  it('a data-folder run: the folder given as it is, a default that does not exist is a user error', () => {
    assert.equal(dataFolderOfRun('/given/even/if/missing', {}, noFiles), '/given/even/if/missing');
    assert.equal(dataFolderOfRun(undefined, {}, (f) => f === './data'), './data');
    assert.throws(() => dataFolderOfRun(undefined, {}, dockerenv), { name: 'UserError', message: /\/data \(the default inside a container; \/data\) does not exist/ });
    assert.throws(() => dataFolderOfRun(undefined, { KBC_DATADIR: '/x\ny' }, noFiles), { message: /"\/x\\ny" \(\$KBC_DATADIR;/ });
  });
});
