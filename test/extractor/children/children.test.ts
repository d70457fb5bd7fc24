import assert from 'node:assert/strict';
import { compileRecursionFilter } from '../../../src/extractor/children/recursion-filter.js';
import { fillEndpoint, inheritResolved, parentColumns, parsePlaceholders, placeholderCombinations } from '../../../src/extractor/children/placeholders.js';
import { UserFunctions } from '../../../src/extractor/functions/user-functions.js';
import { decodeJson, fromPlain, stringifyExact, type JsonObject } from '../../../src/json/index.js';

describe('recursionFilter', () => {
  const items = decodeJson('[{"id":123,"role":"parent","type":"admin"},{"id":234,"role":"parent","type":"minion"},{"id":345,"role":"child","type":"maximum"},{"id":456,"role":"child","type":"ministry"}]') as JsonObject[];
  const pick = (expression: string) => items.filter(compileRecursionFilter(expression)).map((i) => i.get('id'));

  it('compares strings and numbers like PHP', () => {
    assert.deepEqual(pick('role==parent'), [123, 234]);
    assert.deepEqual(pick('id<400&role==child'), [345]);
    assert.deepEqual(pick('id>=234'), [234, 345, 456]);
    assert.deepEqual(pick('role!=parent'), [345, 456]);
  });

  it('binds & tighter than | (GE\'s actual precedence)', () => {
    assert.deepEqual(pick('role==parent|id>300&id<400'), [123, 234, 345]);
  });

  it('matches LIKE patterns with % for ~~ and !~', () => {
    assert.deepEqual(pick('type!~%min%'), [345]);
    assert.deepEqual(pick('type~~min%'), [234, 456]);
  });

  it('needs an operator', () => {
    assert.throws(() => compileRecursionFilter('role'), /no operator found/);
  });
});

describe('placeholders', () => {
  const fns = new UserFunctions();

  it('reads nested paths at parent levels and fills the endpoint', () => {
    const placeholders = parsePlaceholders(fromPlain({ 'user-id': 'user-info.id', '2:org': 'id' }) as JsonObject);
    const ancestors = [decodeJson('{"user-info":{"id":7}}'), decodeJson('{"id":"o1"}')];
    const [combo] = placeholderCombinations(placeholders, ancestors, fns);
    assert.equal(fillEndpoint('org/{2:org}/user/{user-id}', combo), 'org/o1/user/7');
    assert.equal(stringifyExact(parentColumns(combo)), '{"parent_user-info.id":7,"parent_id":"o1"}');
  });

  it('fans out list values into the cartesian product, the last placeholder fastest', () => {
    const placeholders = parsePlaceholders(fromPlain({ a: 'as', b: 'bs' }) as JsonObject);
    const combos = placeholderCombinations(placeholders, [decodeJson('{"as":[1,2],"bs":["x","y"]}')], fns);
    assert.deepEqual(combos.map((c) => fillEndpoint('{a}/{b}', c)), ['1/x', '1/y', '2/x', '2/y']);
  });

  it('applies a placeholder function to the value (urlencode allowed)', () => {
    const placeholders = parsePlaceholders(fromPlain({ id: { path: 'id', function: 'sprintf', args: ["%'.05d", { placeholder: 'value' }] }, q: { path: 'q', function: 'urlencode', args: [{ placeholder: 'value' }] } }) as JsonObject);
    const [combo] = placeholderCombinations(placeholders, [decodeJson('{"id":3,"q":"a b"}')], fns);
    assert.equal(fillEndpoint('user/{id}?q={q}', combo), 'user/00003?q=a+b');
    assert.equal(stringifyExact(parentColumns(combo)), '{"parent_id":"00003","parent_q":"a+b"}');
  });

  it('inherits resolved values from the parent; the child wins on the same name', () => {
    const fnsFor = (json: string, record: string) => placeholderCombinations(parsePlaceholders(decodeJson(json) as JsonObject), [decodeJson(record)], fns)[0];
    const parent = fnsFor('{"user-id":"id"}', '{"id":1}');
    const child = fnsFor('{"order-id":"id"}', '{"id":99}');
    const merged = inheritResolved(parent, child);
    assert.equal(fillEndpoint('user/{user-id}/order/{order-id}', merged), 'user/1/order/99');
    assert.equal(stringifyExact(parentColumns(merged)), '{"parent_id":99}', 'same path: one column, the innermost value');
  });

  it('fails clearly for a missing value or level', () => {
    const placeholders = parsePlaceholders(fromPlain({ x: 'nope', '3:y': 'id' }) as JsonObject);
    assert.throws(() => placeholderCombinations(placeholders.slice(0, 1), [decodeJson('{}')], fns), /No value found for x in parent result\. \(level: 1\)/);
    assert.throws(() => placeholderCombinations(placeholders.slice(1), [decodeJson('{}')], fns), /Level 3 not found in parent results!/);
  });
});
