import assert from 'node:assert/strict';
import { changedPaths } from '../../src/cli/input/changed-paths.js';
import { formatPath, parseAssignment, parsePath, setAt } from '../../src/cli/input/json-path.js';
import { fromPlain, stringifyExact } from '../../src/json/index.js';

describe('--set paths', () => {
  it('reads keys, list indexes and bracketed JSON keys', () => {
    assert.deepEqual(parsePath('parameters.config.jobs[0].endpoint'), ['parameters', 'config', 'jobs', 0, 'endpoint']);
    assert.deepEqual(parsePath('parameters["a.b"][2]["x]"]'), ['parameters', 'a.b', 2, 'x]']);
    assert.deepEqual(parsePath('#password'), ['#password']);
    assert.equal(formatPath(parsePath('parameters["a.b"].c[1]')), 'parameters["a.b"].c[1]');
  });

  it('refuses hostile and malformed paths with the reason', () => {
    for (const [path, reason] of [
      ['__proto__.x', /"__proto__", which is refused/],
      ['a.constructor.prototype', /"constructor", which is refused/],
      ['a["__proto__"]', /"__proto__", which is refused/],
      ['', /is empty/],
      ['a.', /empty key/],
      ['a[', /without its "]"/],
      ['a[x]', /brackets hold a list index/],
      ['a[100001]', /above 100000/],
      ['a'.repeat(1001), /longer than 1000/],
      [Array(70).fill('a').join('.'), /deeper than 64 steps/],
      ['a\u001b[2J', /"a\\u001b\[2J"/],
    ] as const) {
      assert.throws(() => parsePath(path), reason, path);
    }
  });

  it('sets values without touching the original, creating objects and lists on the way', () => {
    const root = fromPlain({ parameters: { api: { baseUrl: 'x' } } });
    const { path, value } = parseAssignment('parameters.config.jobs[0].params={"limit": 10, "f": 1.0}');
    const out = setAt(root, path, value);
    assert.equal(
      stringifyExact(out),
      '{"parameters":{"api":{"baseUrl":"x"},"config":{"jobs":[{"params":{"limit":10,"f":1.0}}]}}}',
    );
    assert.equal(stringifyExact(root), '{"parameters":{"api":{"baseUrl":"x"}}}');
    assert.equal(parseAssignment('a=not json').value, 'not json');
    assert.equal(parseAssignment('a=b=c').value, 'b=c');
    assert.equal(parseAssignment('a="quoted"').value, 'quoted');
  });

  it('names changed paths, never values', () => {
    const before = fromPlain({ a: { '#s': 'KBC::x', list: [1, 2] }, b: 1 });
    const after = fromPlain({ a: { '#s': 'plain secret', list: [1, 3, 4] }, c: 2 });
    assert.deepEqual(changedPaths(before, after, 50), ['a.#s', 'a.list[1]', 'a.list[2]', 'b', 'c']);
  });
});
