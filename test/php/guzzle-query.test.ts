import assert from 'node:assert/strict';
import { fromPlain, type JsonObject } from '../../src/json/index.js';
import { guzzleQueryBuild, guzzleQueryParse } from '../../src/php/index.js';

describe('Guzzle Query::parse / Query::build (psr7 1.8)', () => {
  it('parse: splits on & and the first =, decodes + as space and %XX', () => {
    assert.deepEqual(
      [...guzzleQueryParse('a=1&b=x+y%20z&c=d=e&e%5B0%5D=%7E')],
      [
        ['a', '1'],
        ['b', 'x y z'],
        ['c', 'd=e'],
        ['e[0]', '~'],
      ],
    );
  });

  it('parse: a key without = is null, a repeated key collects a list', () => {
    assert.deepEqual(
      [...guzzleQueryParse('flag&k=1&k=2&k')],
      [
        ['flag', null],
        ['k', ['1', '2', null]],
      ],
    );
  });

  it('parse: PHP isset quirk — a key first seen without a value is replaced, not listed', () => {
    assert.deepEqual([...guzzleQueryParse('a&a=1')], [['a', '1']]);
    assert.deepEqual([...guzzleQueryParse('')], []);
  });

  it('build: rawurlencode (space %20, ~ kept, * escaped), null = bare key, lists repeat the key', () => {
    const params = fromPlain({ q: 'a b~*', 'k[0]': 'x', n: null, list: ['1', null, '2'] }) as JsonObject;
    assert.equal(guzzleQueryBuild(params), 'q=a%20b~%2A&k%5B0%5D=x&n&list=1&list&list=2');
  });

  it('build: true is 1, false an empty value (psr7 1.x string cast), ints and floats as PHP prints them', () => {
    const params = fromPlain({ t: true, f: false, i: 12, x: 1.5 }) as JsonObject;
    assert.equal(guzzleQueryBuild(params), 't=1&f=&i=12&x=1.5');
  });

  it('build: RFC 1738 mode uses urlencode', () => {
    assert.equal(guzzleQueryBuild(fromPlain({ q: 'a b~' }) as JsonObject, 'RFC1738'), 'q=a+b%7E');
  });

  it('parse then build re-encodes a query: the auth-time query trap', () => {
    const original = 'modified_since=2017-04-19+12%3A46%3A46&t=%7E';
    assert.equal(guzzleQueryBuild(guzzleQueryParse(original)), 'modified_since=2017-04-19%2012%3A46%3A46&t=~');
  });
});
