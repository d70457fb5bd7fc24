import assert from 'node:assert/strict';
import { decodeJson } from '../../src/json/index.js';
import { getDataFromMappingPath, getDataFromPath } from '../../src/php/index.js';

describe('php: getDataFromPath (keboola/php-utils)', () => {
  const data = decodeJson('{"a":{"b":[10,null,{"c":"x"}],"n":null},"":{"e":1},"1":"one"}');

  it('walks object properties and list indexes', () => {
    assert.equal(getDataFromPath(data, 'a.b.0'), 10);
    assert.equal(getDataFromPath(data, 'a.b.2.c'), 'x');
    assert.equal(getDataFromPath(data, 'a/b/2/c', '/'), 'x');
    assert.equal(getDataFromPath(data, '.e'), 1);
    assert.equal(getDataFromPath(data, '.'), data);
  });

  it('a null property is found, a null list item or a missing step is not (undefined)', () => {
    assert.equal(getDataFromPath(data, 'a.n'), null);
    assert.equal(getDataFromPath(data, 'a.b.1'), undefined);
    assert.equal(getDataFromPath(data, 'a.x'), undefined);
    assert.equal(getDataFromPath(data, 'a.b.2.c.d'), undefined);
    assert.equal(getDataFromPath(data, 'a.b.01'), undefined, 'PHP: isset($list["01"]) is false');
  });

  it('the mapping form: missing is null, an integer-like key is never the separator', () => {
    assert.equal(getDataFromMappingPath(data, 'a.x', '.'), null);
    assert.equal(getDataFromMappingPath(data, 'a.b.2.c', '.'), 'x');
    assert.equal(getDataFromMappingPath(data, '.', '.'), data);
    assert.equal(getDataFromMappingPath(data, '1', '1'), null);
  });
});
