import assert from 'node:assert/strict';
import { compileRecursionFilter } from '../../../src/extractor/children/recursion-filter.js';
import {
  childCombinations,
  fillEndpoint,
  parentColumns,
  parsePlaceholders,
} from '../../../src/extractor/children/placeholders.js';
import { UserFunctions } from '../../../src/extractor/functions/user-functions.js';
import { decodeJson, fromPlain, stringifyExact, type JsonObject } from '../../../src/json/index.js';

describe('recursionFilter', () => {
  const items = decodeJson(
    '[{"id":123,"role":"parent","type":"admin"},{"id":234,"role":"parent","type":"minion"},{"id":345,"role":"child","type":"maximum"},{"id":456,"role":"child","type":"ministry"}]',
  ) as JsonObject[];
  const pick = (expression: string) => items.filter(compileRecursionFilter(expression)).map((i) => i.get('id'));

  it('compares strings and numbers like PHP', () => {
    assert.deepEqual(pick('role==parent'), [123, 234]);
    assert.deepEqual(pick('id<400&role==child'), [345]);
    assert.deepEqual(pick('id>=234'), [234, 345, 456]);
    assert.deepEqual(pick('role!=parent'), [345, 456]);
  });

  it("binds & tighter than | (GE's actual precedence)", () => {
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
    const [combo] = childCombinations(placeholders, [], ancestors, fns);
    assert.equal(fillEndpoint('org/{2:org}/user/{user-id}', combo), 'org/o1/user/7');
    assert.equal(stringifyExact(parentColumns(combo)), '{"parent_user-info.id":7,"parent_id":"o1"}');
  });

  it('fans out list values into the cartesian product, the last placeholder fastest', () => {
    const placeholders = parsePlaceholders(fromPlain({ a: 'as', b: 'bs' }) as JsonObject);
    const combos = childCombinations(placeholders, [], [decodeJson('{"as":[1,2],"bs":["x","y"]}')], fns);
    assert.deepEqual(
      combos.map((c) => fillEndpoint('{a}/{b}', c)),
      ['1/x', '1/y', '2/x', '2/y'],
    );
  });

  it('applies a placeholder function to the value (urlencode allowed)', () => {
    const placeholders = parsePlaceholders(
      fromPlain({
        id: { path: 'id', function: 'sprintf', args: ["%'.05d", { placeholder: 'value' }] },
        q: { path: 'q', function: 'urlencode', args: [{ placeholder: 'value' }] },
      }) as JsonObject,
    );
    const [combo] = childCombinations(placeholders, [], [decodeJson('{"id":3,"q":"a b"}')], fns);
    assert.equal(fillEndpoint('user/{id}?q={q}', combo), 'user/00003?q=a+b');
    assert.equal(stringifyExact(parentColumns(combo)), '{"parent_id":"00003","parent_q":"a+b"}');
  });

  describe("inherited from the ancestors (GE: array_replace of the parent's values by the own ones)", () => {
    const own = (json: string) => parsePlaceholders(decodeJson(json) as JsonObject);
    const combos = (ownJson: string, inherited: ReturnType<typeof childCombinations>[number], record: string) =>
      childCombinations(own(ownJson), inherited, [decodeJson(record)], fns);
    const [parent] = combos('{"user-id":"id","kind":"k"}', [], '{"id":1,"k":"a"}');

    it("adds the child's own values after the inherited ones; the same path gives one column, the innermost value", () => {
      const [merged] = combos('{"order-id":"id"}', parent, '{"id":99}');
      assert.equal(fillEndpoint('user/{user-id}/order/{order-id}/{kind}', merged), 'user/1/order/99/a');
      assert.equal(stringifyExact(parentColumns(merged)), '{"parent_id":99,"parent_k":"a"}');
    });

    it('runs a child without placeholders of its own once with the inherited values, and never without any', () => {
      const runs = combos('{}', parent, '{"id":5}');
      assert.deepEqual(
        runs.map((c) => fillEndpoint('u/{user-id}/{kind}', c)),
        ['u/1/a'],
      );
      assert.deepEqual(combos('{}', [], '{"id":5}'), []);
    });

    it("keeps a shadowed name at the ancestor's position, so the product varies in that order", () => {
      const runs = combos('{"x":"xs","user-id":"ids"}', parent, '{"xs":["p","q"],"ids":[7,8]}');
      // GE: user-id (first in the parent's list) varies slowest although the child names it last
      assert.deepEqual(
        runs.map((c) => fillEndpoint('{user-id}/{kind}/{x}', c)),
        ['7/a/p', '7/a/q', '8/a/p', '8/a/q'],
      );
    });

    it('refuses an integer-like own name, which GE cannot run (a PHP type error)', () => {
      assert.throws(() => combos('{"0":"id"}', parent, '{"id":9}'), /The placeholder name '0' is an integer/);
      assert.equal(fillEndpoint('{01}', combos('{"01":"id"}', [], '{"id":9}')[0]), '9');
    });

    it('gives a placeholder function the whole value; a list there finds no value, as in GE', () => {
      const fn = '{"ids":{"path":"ids","function":"concat","args":[{"placeholder":"value"},"!"]}}';
      assert.equal(fillEndpoint('{ids}', combos(fn, [], '{"ids":"a"}')[0]), 'a!');
      assert.throws(
        () => combos(fn, [], '{"ids":[1,2]}'),
        /Error evaluating user function - placeholder 'value' not found!/,
      );
    });
  });

  it('fails clearly for a missing value or level', () => {
    const placeholders = parsePlaceholders(fromPlain({ x: 'nope', '3:y': 'id' }) as JsonObject);
    assert.throws(
      () => childCombinations(placeholders.slice(0, 1), [], [decodeJson('{}')], fns),
      /No value found for x in parent result\. \(level: 1\)/,
    );
    assert.throws(
      () => childCombinations(placeholders.slice(1), [], [decodeJson('{}')], fns),
      /Level 3 not found in parent results!/,
    );
  });
});
