import assert from 'node:assert/strict';
import { groupThousands, plural } from '../../src/common/text.js';

describe('text helpers', () => {
  it('groups thousands like toLocaleString("en") does for counts', () => {
    for (const n of [0, 7, 999, 1000, 12345, 1234567, -1234, 1001001]) assert.equal(groupThousands(n), n.toLocaleString('en'));
    assert.equal(groupThousands(1234.5678), '1,234.5678');
  });

  it('pluralises nouns', () => {
    assert.equal(plural(1, 'page'), '1 page');
    assert.equal(plural(100000, 'record'), '100,000 records');
    assert.equal(plural(2, 'entry', 'entries'), '2 entries');
  });
});
