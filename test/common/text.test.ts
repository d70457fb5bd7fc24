import assert from 'node:assert/strict';
import { DatabaseUnavailable } from '../../src/store/sql/database.js';
import { groupThousands, plural, sentence } from '../../src/common/text.js';

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

  it('ends a sentence once, whatever the text ends with, so that joined messages never show ".."', () => {
    assert.equal(sentence('Configuration a already exists.'), 'Configuration a already exists.');
    assert.equal(sentence('exists'), 'exists.');
    assert.equal(sentence('really? '), 'really?');
    assert.equal(sentence('wait…'), 'wait…');
    assert.equal(sentence('stop!'), 'stop!');
    // the messages that join another error's message with a sentence of their own
    const joined = new DatabaseUnavailable('connection refused.', 'postgres://db/x').message;
    assert.ok(!joined.includes('..'), joined);
    assert.match(joined, /connection refused\. Nothing was changed/);
  });
});
