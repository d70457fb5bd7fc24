import assert from 'node:assert/strict';
import { UserError } from '../../src/common/errors.js';
import { fromPlain, type JsonObject } from '../../src/json/index.js';
import { defaultBucketId, defaultDestination } from '../../src/runner/default-bucket.js';
import { MAX_INPUT_TABLES, parseInputTables } from '../../src/runner/input-mapping.js';

const NOW = new Date(Date.UTC(2026, 0, 10, 12, 0, 0));
const storage = (tables: unknown) => fromPlain({ input: { tables } }) as JsonObject;
const parse = (tables: unknown) => parseInputTables(storage(tables), 'Row r1', NOW);
const userError = (pattern: RegExp) => (e: unknown) => {
  assert.ok(e instanceof UserError, `a UserError, not ${String(e)}`);
  assert.match(e.message, pattern);
  return true;
};

describe('input mapping: storage.input.tables', () => {
  it("reads Keboola's keys into table queries; no destination is the source table id (no .csv added)", () => {
    const [a, b] = parse([
      {
        source: 'in.c-shop.users',
        destination: 'users.csv',
        columns: ['id'],
        where_column: 'id',
        where_values: ['1', '2'],
        where_operator: 'ne',
        limit: 5,
        column_types: [],
      },
      { source: 'in.c-shop.orders', changed_since: '-2 days' },
    ]);
    assert.deepEqual(a, {
      where: 'storage.input.tables[0]',
      source: 'in.c-shop.users',
      destination: 'users.csv',
      query: {
        columns: ['id'],
        whereColumn: 'id',
        whereValues: ['1', '2'],
        whereOperator: 'ne',
        changedSince: undefined,
        limit: 5,
      },
    });
    assert.equal(b.destination, 'in.c-shop.orders');
    assert.equal(b.query.changedSince?.toISOString(), '2026-01-08T12:00:00.000Z');
    assert.equal(
      parse([{ source: 'in.c-shop.orders', days: 3 }])[0].query.changedSince?.toISOString(),
      '2026-01-07T12:00:00.000Z',
    );
    assert.deepEqual(parseInputTables(fromPlain({}) as JsonObject, 'Row r1', NOW), []);
    assert.deepEqual(parseInputTables(fromPlain({ input: { files: [] } }) as JsonObject, 'Row r1', NOW), []);
  });

  it('refuses hostile destinations, naming the row and the entry', () => {
    const hostile: Array<[string, RegExp]> = [
      ['../x', /contains a path separator/],
      ['/etc/x', /contains a path separator/],
      ['a/b', /contains a path separator/],
      ['a\\b', /contains a path separator/],
      ['', /is empty/],
      ['.', /names a folder/],
      ['..', /names a folder/],
      ['x\u0000y', /NUL byte/],
      ['x\ny', /control or invisible character/],
      ['x\u202Ey', /control or invisible character/],
      ['x'.repeat(300), /over the file system's limit of 255 bytes/],
      ['users.csv.manifest', /ends in \.manifest/],
    ];
    for (const [destination, problem] of hostile) {
      assert.throws(
        () => parse([{ source: 'in.c-shop.users', destination }]),
        userError(
          new RegExp(
            `^Row r1: storage\\.input\\.tables\\[0\\]\\.destination .*${problem.source}.*; name a file in in/tables`,
          ),
        ),
        JSON.stringify(destination),
      );
    }
    // a source id too long for a file name needs a destination
    assert.throws(() => parse([{ source: `in.c-shop.${'t'.repeat(300)}` }]), userError(/over the file system's limit/));
    assert.throws(() => parse([{ source: 'in.c-a.t', destination: 1 }]), userError(/destination must be a file name/));
  });

  it('refuses two tables in one file, a bad source, bad filters, "adaptive" and too many tables', () => {
    assert.throws(
      () =>
        parse([
          { source: 'in.c-a.t', destination: 'x' },
          { source: 'in.c-a.u', destination: 'x' },
        ]),
      userError(/tables\[1\]\.destination x is also the destination of storage\.input\.tables\[0\]/),
    );
    assert.throws(
      () => parse([{ source: 'users' }]),
      userError(
        /^Row r1: storage\.input\.tables\[0\]\.source: users is not a table id of the form in\.c-<bucket>\.<table>/,
      ),
    );
    assert.throws(() => parse([{}]), userError(/tables\[0\]\.source must be a table id/));
    assert.throws(() => parse({ source: 'in.c-a.t' }), userError(/storage\.input\.tables must be a list/));
    assert.throws(() => parse(['in.c-a.t']), userError(/tables\[0\] must be an object/));
    assert.throws(
      () => parse([{ source: 'in.c-a.t', where_operator: 'gt' }]),
      userError(/where_operator must be "eq" or "ne", not "gt"/),
    );
    assert.throws(
      () => parse([{ source: 'in.c-a.t', where_values: [1] }]),
      userError(/where_values must be a list of strings/),
    );
    assert.throws(() => parse([{ source: 'in.c-a.t', limit: -1 }]), userError(/limit must be a whole number/));
    assert.throws(
      () => parse([{ source: 'in.c-a.t', changed_since: 'adaptive' }]),
      userError(/changed_since is "adaptive", which gex does not support/),
    );
    assert.throws(
      () => parse([{ source: 'in.c-a.t', changed_since: 'yesterday-ish' }]),
      userError(/changed_since .* is not a moment/),
    );
    assert.throws(
      () => parse([{ source: 'in.c-a.t', days: '1; DROP TABLE x' }]),
      userError(/days must be a whole number of days/),
    );
    assert.throws(
      () =>
        parse(Array.from({ length: MAX_INPUT_TABLES + 1 }, (_, i) => ({ source: 'in.c-a.t', destination: `f${i}` }))),
      userError(/more than the 1000 a row may read/),
    );
  });
});

describe('default bucket of tables without a manifest destination', () => {
  it('is in.c-<component id, characters outside A-Z a-z 0-9 - as "-">-<config id>', () => {
    assert.equal(defaultBucketId('ex-generic-v2', '123'), 'in.c-ex-generic-v2-123');
    assert.equal(defaultBucketId('keboola.ex-generic-v2', 'my_config-1'), 'in.c-keboola-ex-generic-v2-my_config-1');
    assert.equal(defaultDestination('in.c-x-1', 'users'), 'in.c-x-1.users');
    assert.equal(defaultDestination('in.c-x-1', 'users.csv'), 'in.c-x-1.users');
    assert.equal(defaultDestination('in.c-x-1', 'a.b'), 'in.c-x-1.a.b');
  });

  it('refuses configuration ids a bucket name cannot hold, with a clear user error (never a bucket of another id)', () => {
    for (const id of ['a.b', 'a/b', '../x', 'x\u0000y', 'x\ny', '', 'ä', 'a b']) {
      assert.throws(
        () => defaultBucketId('ex-generic-v2', id),
        userError(
          /cannot be made from configuration id .*: a bucket name holds only letters, digits, "-" and "_"\. Set parameters\.config\.outputBucket/s,
        ),
        JSON.stringify(id),
      );
    }
    // 2,000 characters: the message shows only the start
    assert.throws(
      () => defaultBucketId('ex-generic-v2', 'x'.repeat(2000)),
      (e: unknown) =>
        e instanceof UserError &&
        /x…: it is 2000 characters long, a bucket name takes at most 200 of it\. Set parameters\.config\.outputBucket/.test(
          e.message,
        ) &&
        e.message.length < 500,
    );
    // a hostile component id is rewritten, and stays one bucket
    assert.equal(defaultBucketId('a.b/c\u0000d', '1'), 'in.c-a-b-c-d-1');
  });
});
