import assert from 'node:assert/strict';
import path from 'node:path';
import {
  decodePathSegment,
  encodePathSegment,
  isInside,
  NAME_MAX_BYTES,
  resolveInside,
  unsafeFileNameProblem,
} from '../../src/common/safe-path.js';

describe('safe paths', () => {
  describe('encodePathSegment', () => {
    const hostile = [
      '..',
      '.',
      '../../victim',
      'a/out/tables',
      'a%2Fout%2Ftables',
      '/etc/passwd',
      'C:\\x',
      'nul\u0000byte',
      '',
      '~',
      'ž😀',
      ' ',
    ];
    for (const id of hostile) {
      it(`keeps ${JSON.stringify(id)} one segment inside its parent`, () => {
        const segment = encodePathSegment(id);
        assert.match(segment, /^[A-Za-z0-9_%~-]+$/);
        assert.notEqual(segment, '.');
        assert.notEqual(segment, '..');
        assert.equal(path.dirname(path.join('/data/rows', segment)), '/data/rows');
      });
    }

    it('keeps plain ids readable and round-trips every short id', () => {
      assert.equal(encodePathSegment('row-1_a'), 'row-1_a');
      for (const id of hostile) assert.equal(decodePathSegment(encodePathSegment(id)), id);
    });

    it('gives different ids different segments (the encoding of one is never another id)', () => {
      const ids = [
        ...hostile,
        '%2E%2E',
        '%',
        '~empty',
        'a'.repeat(500),
        `${'a'.repeat(500)}b`,
        'x'.repeat(160),
        'x'.repeat(161),
      ];
      const segments = ids.map(encodePathSegment);
      assert.equal(new Set(segments).size, ids.length);
    });

    it('shortens long ids under the file name limit with a hash that tells them apart', () => {
      const long = '😀'.repeat(1000);
      const segment = encodePathSegment(long);
      assert.ok(Buffer.byteLength(segment) < NAME_MAX_BYTES);
      assert.match(segment, /~[0-9a-f]{64}$/);
      assert.equal(decodePathSegment(segment), null);
      assert.doesNotMatch(segment.split('~')[0], /%[0-9A-F]?$/);
    });
  });

  describe('resolveInside', () => {
    it('joins names that stay inside', () => {
      assert.equal(resolveInside('/data/out/tables', 'in.c-a.b.csv'), '/data/out/tables/in.c-a.b.csv');
      assert.equal(resolveInside('/data', 'rows', '..foo'), '/data/rows/..foo');
    });
    for (const escape of [['..'], ['../x'], ['a', '../../x'], ['/etc/passwd'], ['x\u0000y']]) {
      it(`refuses ${JSON.stringify(escape)}`, () =>
        assert.throws(() => resolveInside('/data/out/tables', ...escape), /Refusing/));
    }
    it('isInside tells a sibling with a common prefix from a child', () => {
      assert.equal(isInside('/data/rows', '/data/rows/a'), true);
      assert.equal(isInside('/data/rows', '/data/rows'), true);
      assert.equal(isInside('/data/rows', '/data/rowsX'), false);
      assert.equal(isInside('/data/rows', '/data'), false);
    });
  });

  describe('unsafeFileNameProblem', () => {
    it('accepts ordinary table file names', () => assert.equal(unsafeFileNameProblem('in.c-bucket.table.csv'), null));
    const cases: Array<[string, RegExp]> = [
      ['', /empty/],
      ['a\u0000b', /NUL/],
      ['../x', /separator/],
      ['a\\b', /separator/],
      ['/abs', /separator/],
      ['..', /folder/],
      ['é'.repeat(200), /400 bytes.*255/],
    ];
    for (const [name, problem] of cases)
      it(`refuses ${JSON.stringify(name.slice(0, 12))}`, () =>
        assert.match(unsafeFileNameProblem(name) ?? '', problem));
  });
});
