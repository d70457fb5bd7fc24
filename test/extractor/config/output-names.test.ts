import assert from 'node:assert/strict';
import { ConfigError, UserError } from '../../../src/common/errors.js';
import { apiName } from '../../../src/extractor/config/api-settings.js';
import { checkOutputNames } from '../../../src/extractor/config/output-names.js';
import { iterationConfigs } from '../../../src/extractor/pre-request-checks.js';
import {
  bucketNameProblem,
  responseTableNameCheck,
  TableNameError,
  tableFileName,
  tableFileProblem,
} from '../../../src/extractor/output/table-files.js';
import { decodeJson, type JsonObject } from '../../../src/json/index.js';
import { runOutput } from '../../support/output.js';

/** Runs the up-front check on `parameters` (JSON text) and returns the ConfigError it throws. */
function refusal(parameters: unknown): ConfigError {
  const decoded = decodeJson(JSON.stringify(parameters)) as JsonObject;
  try {
    checkOutputNames(decoded, iterationConfigs(decoded), apiName(decoded.get('api') as JsonObject));
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail('the configuration was accepted');
}

function accepts(parameters: unknown): void {
  const decoded = decodeJson(JSON.stringify(parameters)) as JsonObject;
  checkOutputNames(decoded, iterationConfigs(decoded), apiName(decoded.get('api') as JsonObject));
}

const jobs = [{ endpoint: 'users' }];

describe('table file names: rules', () => {
  it('names files <bucket>.<table>, or <table> in the default bucket', () => {
    assert.equal(tableFileName('b', 'users'), 'b.users');
    assert.equal(tableFileName(null, 'users'), 'users');
  });

  it('keeps odd but safe names (dots, spaces, unicode) as they are', () => {
    assert.equal(tableFileProblem('my.bucket ü x', 'child tab.ü'), null);
    assert.equal(tableFileProblem(null, '...users'), null);
  });

  it('refuses NUL bytes, separators, ".", "..", empty names and names over 255 bytes with ".manifest"', () => {
    assert.match(tableFileProblem('b', 'a\u0000b')!, /NUL byte/);
    assert.match(tableFileProblem('b', '../x')!, /path separator/);
    assert.match(tableFileProblem('b', 'a\\b')!, /path separator/);
    assert.match(tableFileProblem(null, '.')!, /names a folder/);
    assert.match(tableFileProblem(null, '..')!, /names a folder/);
    assert.match(tableFileProblem('b', '')!, /is empty/);
    assert.match(tableFileProblem('..', 'x')!, /bucket name "\.\." is "\.\."/);
    // 246 bytes + ".manifest" = 255 fits; one more byte does not (counted in UTF-8 bytes)
    assert.equal(tableFileProblem(null, 'x'.repeat(246)), null);
    assert.match(tableFileProblem(null, 'x'.repeat(247))!, /256 bytes long, over the file system's limit of 255/);
    assert.match(tableFileProblem('b', 'ü'.repeat(123))!, /257 bytes long/);
  });

  it("reserves the names of gex's work folders in out/tables, and only those", () => {
    assert.match(tableFileProblem(null, '.gex-staging')!, /reserved for gex's work folder/);
    assert.match(tableFileProblem(null, '.gex-parts')!, /reserved/);
    assert.equal(tableFileProblem('b', '.gex-staging'), null);
    assert.equal(tableFileProblem(null, '.parts'), null);
  });

  it('refuses a bucket that leaves no room for a table name', () => {
    assert.equal(bucketNameProblem('b'.repeat(244)), null);
    assert.match(bucketNameProblem('b'.repeat(245))!, /245 bytes long.*at most 244 bytes/);
  });

  it('refuses a table derived from response keys with a user error naming the response path', () => {
    const check = responseTableNameCheck('b');
    check('users_tags', 'users.tags');
    assert.throws(
      () => check('x'.repeat(250), `users.${'x'.repeat(250)}`),
      (error: unknown) =>
        error instanceof TableNameError &&
        error instanceof UserError &&
        /response path "users\.xxx/.test(error.message) &&
        /255 bytes/.test(error.message),
    );
  });
});

describe('output names: checked before the run', () => {
  it('accepts what GE writes byte for byte: dots, spaces and unicode in buckets, mappings and data types', () => {
    accepts({
      api: { baseUrl: 'http://x/', name: 'my api.ü' },
      config: {
        id: 'x.1',
        jobs: [
          { endpoint: 'users', dataType: 'a b.c ü', children: [{ endpoint: 'u/{id}', placeholders: { id: 'id' } }] },
        ],
        mappings: {
          'my table.ü': { id: 'id', items: { type: 'table', destination: 'child tab.ü', tableMapping: { v: 'v' } } },
        },
      },
    });
  });

  it('names config.outputBucket for a traversal, an absolute path, a backslash or a NUL byte', () => {
    for (const bucket of ['../../../../tmp/pwned', '/tmp/pwned', 'a\\b', 'a\u0000b', '..', '.']) {
      const error = refusal({ api: { baseUrl: 'http://x/' }, config: { outputBucket: bucket, jobs } });
      assert.equal(error.path, 'parameters.config.outputBucket', bucket);
      assert.match(error.message, /^Invalid configuration at parameters\.config\.outputBucket: the bucket name /);
    }
  });

  it('names the iteration that sets the bucket', () => {
    const error = refusal({
      api: { baseUrl: 'http://x/' },
      config: { outputBucket: 'ok', jobs },
      iterations: [{}, { outputBucket: 'x/y' }],
    });
    assert.equal(error.path, 'parameters.iterations[1].outputBucket');
  });

  it('names api.name or config.id when the default bucket ex-api-<name>-<id> cannot be a file name', () => {
    assert.equal(
      refusal({ api: { baseUrl: 'http://x/', name: 'a/b' }, config: { id: '1', jobs } }).path,
      'parameters.api.name',
    );
    assert.equal(refusal({ api: { baseUrl: 'http://x/' }, config: { id: '../1', jobs } }).path, 'parameters.config.id');
    assert.equal(
      refusal({ api: { baseUrl: 'http://x/' }, config: { id: 'i'.repeat(300), jobs } }).path,
      'parameters.config.id',
    );
  });

  it('names the mapping key, and the destination of a table entry at any depth', () => {
    assert.equal(
      refusal({ api: { baseUrl: 'http://x/' }, config: { jobs, mappings: { '../../x': { id: 'id' } } } }).path,
      'parameters.config.mappings["../../x"]',
    );
    assert.equal(
      refusal({ api: { baseUrl: 'http://x/' }, config: { jobs, mappings: { '..': { id: 'id' } } } }).path,
      'parameters.config.mappings[".."]',
    );
    const nested = {
      users: {
        id: 'id',
        items: {
          type: 'table',
          destination: 'items',
          tableMapping: { tags: { type: 'table', destination: '/tmp/pwned', tableMapping: { v: 'v' } } },
        },
      },
    };
    assert.equal(
      refusal({ api: { baseUrl: 'http://x/' }, config: { jobs, mappings: nested } }).path,
      'parameters.config.mappings.users.items.tableMapping.tags.destination',
    );
  });

  it('names a mapping key whose file with the bucket and ".manifest" is over 255 bytes', () => {
    const error = refusal({
      api: { baseUrl: 'http://x/' },
      config: { outputBucket: 'bucket', jobs, mappings: { ['ü'.repeat(120)]: { id: 'id' } } },
    });
    assert.match(error.path, /^parameters\.config\.mappings\["üüü/);
    assert.match(error.message, /256 bytes long, over the file system's limit of 255/);
  });

  it('names a job (or child job) whose dataType or endpoint gives an empty or too long table name', () => {
    assert.equal(
      refusal({ api: { baseUrl: 'http://x/' }, config: { jobs: [{ endpoint: 'users', dataType: '!!!' }] } }).path,
      'parameters.config.jobs[0].dataType',
    );
    const child = refusal({
      api: { baseUrl: 'http://x/' },
      config: {
        jobs: [{ endpoint: 'users', children: [{ endpoint: '{id}/', dataType: '{}', placeholders: { id: 'id' } }] }],
      },
    });
    assert.equal(child.path, 'parameters.config.jobs[0].children[0].dataType');
    assert.match(
      child.message,
      /"\{\}" becomes the table name "" \(only letters, digits and "-" are kept\): the table name "" is empty/,
    );
    // words joined by "-" after a "_" shorten to their initials (GE's acronym), still over 255 bytes
    const words = `x_${Array.from({ length: 300 }, () => 'a').join('-')}`;
    assert.equal(
      refusal({ api: { baseUrl: 'http://x/' }, config: { jobs: [{ endpoint: words }] } }).path,
      'parameters.config.jobs[0].endpoint',
    );
  });

  it('leaves a job whose data type is mapped to its mapping key', () => {
    accepts({
      api: { baseUrl: 'http://x/' },
      config: { jobs: [{ endpoint: 'users', dataType: '!!!' }], mappings: { '!!!': { id: 'id' } } },
    });
  });
});

describe('output names: the last check where files are named', () => {
  it('refuses a mapped table name that reached the writer without a config check, writing nothing', async () => {
    await assert.rejects(
      runOutput([
        { bucket: null, mappings: '{"../escaped":{"id":"id"}}', batches: [{ rows: '[{"id":1}]', type: '../escaped' }] },
      ]),
      (error: unknown) =>
        error instanceof UserError &&
        /Cannot write the table "\.\.\/escaped": the table name "\.\.\/escaped" contains a path separator/.test(
          (error as Error).message,
        ),
    );
  });

  it('writes a table whose name was gex\'s folder for unfinished CSVs (".parts"), as GE does', async () => {
    const { files } = await runOutput([
      { bucket: null, mappings: '{".parts":{"id":"id"}}', batches: [{ rows: '[{"id":1}]', type: '.parts' }] },
    ]);
    assert.deepEqual([...files.keys()], ['.parts', '.parts.manifest']);
    assert.equal(files.get('.parts'), '"id"\n"1"\n');
  });

  it('refuses a child table whose response key makes its name too long, in the JSON and the legacy parser, with and without drafts', async () => {
    const key = Array.from({ length: 300 }, () => 'k').join('-');
    for (const [compatLevel, drafts] of [
      [3, true],
      [3, false],
      [1, true],
    ] as const) {
      await assert.rejects(
        runOutput([{ compatLevel, batches: [{ rows: JSON.stringify([{ id: 1, [key]: [1, 2] }]), type: 'users' }] }], {
          drafts,
        }),
        (error: unknown) =>
          error instanceof TableNameError && /response path "users\.k-k-k/.test((error as Error).message),
        `compatLevel ${compatLevel}, drafts ${drafts}`,
      );
    }
  });
});
