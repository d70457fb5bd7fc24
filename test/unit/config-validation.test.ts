import assert from 'node:assert/strict';
import { ConfigError } from '../../src/common/errors.js';
import { validateParameters } from '../../src/extractor/config/validate.js';
import { parseJobList } from '../../src/extractor/config/job-config.js';
import { createPaginator } from '../../src/extractor/pagination/factory.js';
import { fromPlain } from '../../src/php-compat/index.js';

function problem(parameters: unknown): string {
  try {
    validateParameters(fromPlain(parameters));
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.message;
  }
  return 'valid';
}

const base = { api: { baseUrl: 'https://api.example.com/' }, config: { jobs: [{ endpoint: 'users' }] } };

describe('configuration validation: path, problem and fix', () => {
  it('accepts a minimal configuration and GE-style lenient values', () => {
    assert.equal(problem(base), 'valid');
    assert.equal(problem({ ...base, api: { ...base.api, pagination: { method: 'pagenum', limit: '100', firstPageParams: 'false' } } }), 'valid');
  });

  it('names a missing section', () => {
    assert.equal(problem({ config: base.config }), 'Invalid configuration at parameters.api: is missing');
  });

  it('names a missing job endpoint with the fix', () => {
    assert.match(problem({ ...base, config: { jobs: [{ dataField: 'x' }] } }), /^Invalid configuration at parameters\.config\.jobs\[0\]\.endpoint: is missing\. Set it to a path relative to api\.baseUrl/);
  });

  it('explains a bad page size', () => {
    assert.equal(
      problem({ ...base, api: { ...base.api, pagination: { method: 'pagenum', limit: 'abc' } } }),
      'Invalid configuration at parameters.api.pagination.limit: got "abc". Expected the page size: a non-negative integer',
    );
  });

  it('explains an unknown pagination method and a bad base URL', () => {
    assert.match(problem({ ...base, api: { ...base.api, pagination: { method: 'pages' } } }), /pagination\.method: got "pages"\. Expected one of pagenum, offset/);
    assert.match(problem({ ...base, api: { baseUrl: 'api.example.com' } }), /parameters\.api\.baseUrl: got "api\.example\.com"\. Expected an absolute http\(s\) URL/);
  });

  it('requires a non-empty job list', () => {
    assert.match(problem({ ...base, config: { jobs: [] } }), /parameters\.config\.jobs: got \[\]\. Expected a non-empty list of jobs/);
  });

  it('rejects an unknown job method', () => {
    assert.match(problem({ ...base, config: { jobs: [{ endpoint: 'x', method: 'PUT' }] } }), /jobs\[0\]\.method: got "PUT"\. Expected one of GET, POST/);
  });

  it('collapses identical jobs into one and keeps the first position for a repeated id', () => {
    const jobs = parseJobList(fromPlain([{ endpoint: 'a' }, { endpoint: 'b', id: 'x' }, { endpoint: 'a' }, { endpoint: 'c', id: 'x' }]), 'jobs');
    assert.deepEqual(jobs.map((j) => j.endpoint), ['a', 'c']);
  });

  it('requires a limit for offset pagination', () => {
    assert.throws(() => createPaginator(fromPlain({ method: 'offset' })), /pagination\.limit: is required for offset pagination/);
  });
});
