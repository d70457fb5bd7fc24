import assert from 'node:assert/strict';
import { StatementCache } from '../../../src/store/sql/statement-cache.js';

describe('store: prepared statement cache', () => {
  it('prepares a text once while it is used, and never holds more than its capacity', () => {
    const prepared: string[] = [];
    const cache = new StatementCache((sql) => {
      prepared.push(sql);
      return { sql };
    }, 3);
    assert.equal(cache.get('a').sql, 'a');
    assert.equal(cache.get('a'), cache.get('a'), 'the same statement object is reused');
    cache.get('b');
    cache.get('c');
    cache.get('a'); // a is now the most recently used: b is the oldest
    cache.get('d');
    assert.equal(cache.size, 3);
    cache.get('a');
    cache.get('b'); // b was dropped: prepared again
    assert.deepEqual(prepared, ['a', 'b', 'c', 'd', 'b']);
    for (let i = 0; i < 10_000; i++) cache.get(`SELECT ${i}`);
    assert.equal(cache.size, 3, 'bounded whatever the number of texts');
  });
});
