import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { closestKey, editDistance } from '../../../src/extractor/config/closest-key.js';
import { findUnknownKeys, unknownKeyWarning, warnUnknownKeys } from '../../../src/extractor/config/unknown-keys.js';
import { validateParameters } from '../../../src/extractor/config/validate.js';
import { createLogger } from '../../../src/common/logger.js';
import { fromPlain } from '../../../src/json/index.js';

const base = { api: { baseUrl: 'https://api.example.com/' }, config: { jobs: [{ endpoint: 'users' }] } };

function warnings(parameters: unknown): string[] {
  return findUnknownKeys(fromPlain(parameters)).map(unknownKeyWarning);
}

describe('unknown configuration keys', () => {
  describe('detection', () => {
    it('warns about a mistyped key with its JSON path and the nearest known key', () => {
      assert.deepEqual(warnings({ ...base, api: { ...base.api, paginaton: { method: 'offset' } } }), [
        'Unknown key parameters.api.paginaton (ignored): did you mean "pagination"?',
      ]);
    });

    it('knows the AWS signing keys and finds a mistyped one among them', () => {
      const credentials = { accessKeyId: 'A', '#secretKey': 'S', serviceName: 'execute-api', regionName: 'eu-west-1' };
      assert.deepEqual(warnings({ ...base, aws: { signature: { credentials } } }), []);
      assert.deepEqual(
        warnings({ ...base, aws: { signature: { credentials: { ...credentials, regionNmae: 'x' } } } }),
        ['Unknown key parameters.aws.signature.credentials.regionNmae (ignored): did you mean "regionName"?'],
      );
    });

    it('finds unknown keys at every level the schema describes: jobs, children, pagination, stop conditions, auth, retries', () => {
      const found = warnings({
        api: {
          baseUrl: 'https://api.example.com/',
          pagination: {
            method: 'offset',
            limt: 10,
            forceStop: { pagse: 2 },
            nextPageFlag: { field: 'more', stopOn: false, ifNotset: true },
          },
          authentication: { type: 'login', loginRequest: { endpoint: 'login', parms: {} } },
          retryConfig: { maxRetrys: 3, http: { code: [500] } },
          http: { header: { a: 'b' } },
        },
        config: {
          jobs: [{ endpoint: 'users', dataFeild: 'items', children: [{ endpoint: 'x', placholders: {} }] }],
          outputBuckett: 'b',
        },
        iteratoins: [],
      });
      assert.deepEqual(found.sort(), [
        'Unknown key parameters.api.authentication.loginRequest.parms (ignored): did you mean "params"?',
        'Unknown key parameters.api.http.header (ignored): did you mean "headers"?',
        'Unknown key parameters.api.pagination.forceStop.pagse (ignored): did you mean "pages"?',
        'Unknown key parameters.api.pagination.limt (ignored): did you mean "limit"?',
        'Unknown key parameters.api.pagination.nextPageFlag.ifNotset (ignored): did you mean "ifNotSet"?',
        'Unknown key parameters.api.retryConfig.http.code (ignored): did you mean "codes"?',
        'Unknown key parameters.api.retryConfig.maxRetrys (ignored): did you mean "maxRetries"?',
        'Unknown key parameters.config.jobs[0].children[0].placholders (ignored): did you mean "placeholders"?',
        'Unknown key parameters.config.jobs[0].dataFeild (ignored): did you mean "dataField"?',
        'Unknown key parameters.config.outputBuckett (ignored): did you mean "outputBucket"?',
        'Unknown key parameters.iteratoins (ignored): did you mean "iterations"?',
      ]);
    });

    it('says nothing about a suggestion when no known key is close', () => {
      assert.deepEqual(warnings({ ...base, api: { ...base.api, somethingElse: 1 } }), [
        'Unknown key parameters.api.somethingElse (ignored)',
      ]);
      // two edits on a two-letter key is a different word, not a typo
      assert.deepEqual(warnings({ ...base, config: { ...base.config, ab: 1 } }), [
        'Unknown key parameters.config.ab (ignored)',
      ]);
    });

    it('does not warn about any key of a valid configuration that uses every known section', () => {
      const full = {
        api: {
          baseUrl: 'https://api.example.com/',
          name: 'x',
          caCertificate: '',
          '#clientCertificate': 'secret',
          pagination: {
            method: 'multiple',
            scrollers: { a: { method: 'pagenum', anything: 1 } },
            default: 'a',
            forceStop: { pages: 1, time: 5, volume: 9 },
            limitStop: { count: 5 },
          },
          http: {
            headers: { 'X-Any': 'v' },
            requiredHeaders: ['X-Any'],
            defaultOptions: { params: { any: 1 }, headers: { any: 2 } },
            ignoreErrors: [404],
          },
          retryConfig: {
            maxRetries: 2,
            headerName: 'R',
            httpCodes: [500],
            curlCodes: [6],
            http: { retryHeader: 'R', codes: [500] },
          },
          authentication: {
            type: 'oauth20.login',
            loginRequest: { endpoint: 'l', params: { any: 1 }, headers: { any: 1 } },
            apiRequest: { headers: { any: { response: 'token' } }, query: { any: 1 } },
            expires: { response: 'e', relative: true },
          },
        },
        config: {
          jobs: [
            {
              endpoint: 'e',
              id: 'j',
              userData: { any: 1 },
              params: { any: { function: 'concat', args: ['a', { attr: 'accountId' }] } },
              headers: { any: 1 },
              placeholders: { any: 'id' },
              dataField: { path: 'a', delimiter: '|' },
              children: [{ endpoint: 'c/{any}', placeholders: { any: 'id' } }],
            },
          ],
          outputBucket: 'b',
          incrementalOutput: true,
          incremental: true,
          userData: { anything: 1 },
          mappings: { users: { id: { type: 'column', mapping: { destination: 'id' } } } },
          http: { headers: { 'X-Free': { function: 'md5', args: ['a'] } } },
          username: 'u',
          '#password': 'p',
          debug: true,
          accountId: 123,
          nested: { region: 'eu' },
          '#anySecret': 'x',
        },
        // iteration items overlay config: their keys are the user's own
        iterations: [{ accountId: 1, whatever: 2, nested: { region: 'us' } }],
        '#top': 'x',
      };
      // the attr reference of "nested.region" makes config.nested meant
      full.config.jobs[0].params.any.args.push({ attr: 'nested.region' });
      assert.deepEqual(warnings(full), []);
    });

    it('still warns about a config key that no attr function reads', () => {
      assert.deepEqual(warnings({ ...base, config: { ...base.config, accountId: 1 } }), [
        'Unknown key parameters.config.accountId (ignored)',
      ]);
    });

    it('does not look inside free-form values: params, headers, placeholders, mappings, userData, function objects, baseUrl functions', () => {
      assert.deepEqual(
        warnings({
          api: { baseUrl: { function: 'concat', args: ['https://', { attr: 'host' }], paginaton: 1 } },
          config: {
            jobs: [
              {
                endpoint: 'u',
                params: { paginaton: 1 },
                headers: { paginaton: 1 },
                placeholders: { paginaton: 1 },
                userData: { paginaton: 1 },
              },
            ],
            mappings: { paginaton: { endpoint: 'x' } },
            userData: { paginaton: 1 },
            host: 'h',
          },
        }),
        [],
      );
    });

    it('warns once per path', () => {
      const parameters = fromPlain({ ...base, api: { ...base.api, paginaton: {} } });
      const found = findUnknownKeys(parameters);
      assert.equal(found.length, 1);
      const lines: string[] = [];
      const sink = new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) });
      warnUnknownKeys(parameters, createLogger({ stdout: sink, stderr: sink }));
      assert.equal(lines.filter((l) => l.includes('Unknown key')).length, 1);
      assert.match(lines.join(''), /Unknown key parameters\.api\.paginaton \(ignored\): did you mean "pagination"\?/);
    });

    it('adding the known keys to the schema accepts what was accepted before (validation unchanged)', async () => {
      await validateParameters(
        fromPlain({
          ...base,
          config: { ...base.config, userData: 'x', username: 5, debug: 'yes' },
          sshProxy: {},
          cache: true,
        }),
      );
      await validateParameters(
        fromPlain({
          ...base,
          api: { ...base.api, caCertificate: 7, query: [] },
          config: { jobs: [{ endpoint: 'x', id: { a: 1 }, userData: [1] }] },
        }),
      );
    });
  });

  describe('hostile keys', () => {
    it('shows a key with a newline and an ANSI escape as one quoted token on one line', () => {
      const [line] = warnings({ ...base, api: { ...base.api, 'x\nINFO Saved state\u001b[2K': 1 } });
      assert.equal(line, 'Unknown key parameters.api."x\\nINFO Saved state\\u001b[2K" (ignored)');
      assert.ok(!/[\n\r\u001b]/.test(line));
    });

    it('escapes bidi overrides and line separators that JSON.stringify leaves as they are', () => {
      const [line] = warnings({ ...base, api: { ...base.api, 'a\u202Eb\u2028c': 1 } });
      assert.ok(!/[\u202E\u2028]/.test(line));
      assert.match(line, /"a\\u202eb\\u2028c"/);
    });

    it('cuts a 10,000-character key to a bounded line', () => {
      const key = 'k'.repeat(10_000);
      const [line] = warnings({ ...base, config: { ...base.config, [key]: 1 } });
      assert.ok(line.length < 200, `line of ${line.length} characters`);
      assert.equal(line, `Unknown key parameters.config.${'k'.repeat(64)}…(10000 characters) (ignored)`);
    });

    it('cuts a long key between characters, never inside a surrogate pair', () => {
      const [line] = warnings({ ...base, config: { ...base.config, ['😀'.repeat(100)]: 1 } });
      assert.ok(line.includes(`"${'😀'.repeat(64)}"…(100 characters)`));
    });

    it('a key that imitates a known one through case or a trailing space is still reported', () => {
      assert.deepEqual(warnings({ ...base, api: { ...base.api, 'pagination ': {} } }).length, 1);
      assert.deepEqual(warnings({ ...base, api: { ...base.api, Pagination: {} } }), [
        'Unknown key parameters.api.Pagination (ignored): did you mean "pagination"?',
      ]);
    });
  });

  describe('the nearest key', () => {
    it('counts insertions, deletions, substitutions and neighbour swaps as one edit each', () => {
      assert.equal(editDistance('paginaton', 'pagination'), 1);
      assert.equal(editDistance('pagniation', 'pagination'), 1);
      assert.equal(editDistance('paginatoin', 'pagination'), 1);
      assert.equal(editDistance('limit', 'limiT'), 1);
      assert.equal(editDistance('', 'abc'), 3);
      assert.equal(editDistance('kitten', 'sitting'), 3);
    });

    it('suggests only within 2 edits and a third of the key length, the closest first', () => {
      assert.equal(closestKey('paginaton', ['params', 'pagination']), 'pagination');
      assert.equal(closestKey('limt', ['limit', 'limitParam']), 'limit');
      assert.equal(closestKey('paginxxxon', ['pagination']), undefined);
      assert.equal(closestKey('ab', ['id']), undefined);
      assert.equal(closestKey('pages', ['pagse', 'page']), 'pagse');
      assert.equal(closestKey('x', []), undefined);
    });
  });
});
