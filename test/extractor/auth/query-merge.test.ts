import assert from 'node:assert/strict';
import { mergeQueries } from '../../../src/extractor/auth/index.js';
import { fromPlain, type JsonObject } from '../../../src/json/index.js';

const extra = (v: Record<string, unknown>) => fromPlain(v) as JsonObject;

describe('auth query merge (GE Utils::mergeQueries)', () => {
  it('replaces a same key in place and appends new keys', () => {
    assert.equal(mergeQueries('a=1&token=old&b=2', extra({ token: 'new', z: 'last' })), 'a=1&token=new&b=2&z=last');
  });

  it('re-encodes the whole query even when nothing is added: + becomes %20, %7E becomes ~', () => {
    assert.equal(
      mergeQueries('modified_since=2017-04-19+12%3A46%3A46&t=%7E', extra({})),
      'modified_since=2017-04-19%2012%3A46%3A46&t=~',
    );
    assert.equal(
      mergeQueries('modified_since=2017-04-19+12%3A46%3A46', extra({ token: 'x y' })),
      'modified_since=2017-04-19%2012%3A46%3A46&token=x%20y',
    );
  });

  it('an empty query and nothing to add stays empty', () => {
    assert.equal(mergeQueries('', extra({})), '');
  });

  it('login mode: duplicate keys move to the end as key[0]/key[1] (EX081)', () => {
    assert.equal(
      mergeQueries(
        'debug=1&orderBy=userName&secretKey=none&customerId=234',
        extra({ apiToken: 987654, secretKey: 'a1b2c3d435f6', customerId: 'abc' }),
        true,
      ),
      'debug=1&orderBy=userName&apiToken=987654&secretKey%5B0%5D=none&secretKey%5B1%5D=a1b2c3d435f6&customerId%5B0%5D=234&customerId%5B1%5D=abc',
    );
  });

  it('login mode: equal values collapse to key[0] only', () => {
    assert.equal(mergeQueries('k=same&x=1', extra({ k: 'same' }), true), 'x=1&k%5B0%5D=same');
  });
});
