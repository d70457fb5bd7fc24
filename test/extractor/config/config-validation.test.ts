import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/common/errors.js';
import { parameterProblems, validateParameters } from '../../../src/extractor/config/validate.js';
import { childConcurrencies, parseJobList } from '../../../src/extractor/config/job-config.js';
import { createPaginator } from '../../../src/extractor/pagination/factory.js';
import { fromPlain } from '../../../src/json/index.js';
import { Ajv } from 'ajv';
import { AJV_OPTIONS, GENERATED_VALIDATOR } from '../../../src/extractor/config/validator-options.js';
import { parametersSchema } from '../../../src/extractor/config/schema.js';

async function problem(parameters: unknown): Promise<string> {
  try {
    await validateParameters(fromPlain(parameters));
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.message;
  }
  return 'valid';
}

const base = { api: { baseUrl: 'https://api.example.com/' }, config: { jobs: [{ endpoint: 'users' }] } };

describe('configuration validation: path, problem and fix', () => {
  it('accepts a minimal configuration and GE-style lenient values', async () => {
    assert.equal(await problem(base), 'valid');
    assert.equal(
      await problem({
        ...base,
        api: { ...base.api, pagination: { method: 'pagenum', limit: '100', firstPageParams: 'false' } },
      }),
      'valid',
    );
  });

  it('names a missing section', async () => {
    assert.equal(await problem({ config: base.config }), 'Invalid configuration at parameters.api: is missing');
  });

  it('names a missing job endpoint with the fix', async () => {
    assert.match(
      await problem({ ...base, config: { jobs: [{ dataField: 'x' }] } }),
      /^Invalid configuration at parameters\.config\.jobs\[0\]\.endpoint: is missing\. Set it to a path relative to api\.baseUrl/,
    );
  });

  it('explains a bad page size', async () => {
    assert.equal(
      await problem({ ...base, api: { ...base.api, pagination: { method: 'pagenum', limit: 'abc' } } }),
      'Invalid configuration at parameters.api.pagination.limit: got "abc". Expected the page size: a non-negative integer',
    );
  });

  it('explains an unknown pagination method and a bad base URL', async () => {
    assert.match(
      await problem({ ...base, api: { ...base.api, pagination: { method: 'pages' } } }),
      /pagination\.method: got "pages"\. Expected one of pagenum, offset/,
    );
    assert.match(
      await problem({ ...base, api: { baseUrl: 'api.example.com' } }),
      /parameters\.api\.baseUrl: got "api\.example\.com"\. Expected an absolute http\(s\) URL/,
    );
  });

  it('requires a non-empty job list', async () => {
    assert.match(
      await problem({ ...base, config: { jobs: [] } }),
      /parameters\.config\.jobs: got \[\]\. Expected a non-empty list of jobs/,
    );
  });

  it('child concurrency: a whole number from 1 to 64, anything else named with its path', async () => {
    const withChild = (concurrency: unknown) => ({
      ...base,
      config: {
        jobs: [{ endpoint: 'users', children: [{ endpoint: 'users/{id}', placeholders: { id: 'id' }, concurrency }] }],
      },
    });
    assert.equal(await problem(withChild(8)), 'valid');
    for (const bad of [0, -1, 65, 1.5, '8', 1e300, null, [8], { n: 8 }]) {
      assert.match(
        await problem(withChild(bad)),
        /^Invalid configuration at parameters\.config\.jobs\[0\]\.children\[0\]\.concurrency: /,
        JSON.stringify(bad),
      );
    }
    const [job] = parseJobList(
      fromPlain([
        {
          endpoint: 'users',
          concurrency: 4,
          children: [{ endpoint: 'x', children: [{ endpoint: 'y', concurrency: 2 }] }],
        },
      ]),
      'jobs',
    );
    const effective = childConcurrencies([job], 1);
    assert.deepEqual(
      [effective.get(job), effective.get(job.children[0]), effective.get(job.children[0].children[0])],
      [4, 4, 2],
      'inherited down to the next own value',
    );
    assert.equal(
      childConcurrencies([parseJobList(fromPlain([{ endpoint: 'a', children: [{ endpoint: 'b' }] }]), 'jobs')[0]], 3)
        .values()
        .next().value,
      3,
      'api.pagination.concurrency by default',
    );
  });

  it('rejects an unknown job method', async () => {
    assert.match(
      await problem({ ...base, config: { jobs: [{ endpoint: 'x', method: 'PUT' }] } }),
      /jobs\[0\]\.method: got "PUT"\. Expected one of GET, POST/,
    );
  });

  it('collapses identical jobs into one and keeps the first position for a repeated id', async () => {
    const jobs = parseJobList(
      fromPlain([{ endpoint: 'a' }, { endpoint: 'b', id: 'x' }, { endpoint: 'a' }, { endpoint: 'c', id: 'x' }]),
      'jobs',
    );
    assert.deepEqual(
      jobs.map((j) => j.endpoint),
      ['a', 'c'],
    );
  });

  it('requires a limit for offset pagination', async () => {
    assert.throws(
      () => createPaginator(fromPlain({ method: 'offset' })),
      /pagination\.limit: is required for offset pagination/,
    );
  });

  it('ships a precompiled validator that judges like a runtime-compiled one', async () => {
    // `npm run build` generates it; without it every run would import ajv and compile the schema
    const url = new URL(`../../../src/extractor/config/${GENERATED_VALIDATOR.slice(2)}`, import.meta.url);
    type Validate = ((data: unknown) => boolean) & { errors?: { instancePath: string; keyword: string }[] | null };
    const precompiled = ((await import(url.href)) as { default: Validate }).default;
    const runtime = new Ajv(AJV_OPTIONS).compile(parametersSchema);
    const samples = [
      base,
      { config: base.config },
      { ...base, config: { jobs: [] } },
      { ...base, api: { ...base.api, pagination: { method: 'pagenum', limit: 'abc' } } },
      { ...base, config: { jobs: [{ endpoint: 'x', method: 'PUT', children: [{ endpoint: '' }] }] } },
    ];
    for (const sample of samples) {
      assert.equal(precompiled(sample), runtime(sample));
      assert.deepEqual(
        (precompiled.errors ?? []).map((e) => `${e.instancePath} ${e.keyword}`),
        (runtime.errors ?? []).map((e) => `${e.instancePath} ${e.keyword}`),
      );
    }
  });
});

describe('parameterProblems: a part of a configuration that other parts may complete', () => {
  const problems = async (parameters: unknown) => {
    const { invalid, missing } = await parameterProblems(fromPlain(parameters));
    return { invalid: invalid?.message, missing };
  };

  it('sets missing sections apart from what is wrong with what is there', async () => {
    assert.deepEqual(await problems(base), { invalid: undefined, missing: [] });
    assert.deepEqual(await problems({}), { invalid: undefined, missing: ['parameters.api', 'parameters.config'] });
    assert.deepEqual(await problems({ api: {}, config: {} }), {
      invalid: undefined,
      missing: ['parameters.api.baseUrl', 'parameters.config.jobs'],
    });
    // a root without jobs but with a bad page size: the size is wrong whatever the rows bring
    assert.deepEqual(await problems({ api: { baseUrl: 'https://x/', pagination: { limit: 'abc' } } }), {
      invalid:
        'Invalid configuration at parameters.api.pagination.limit: got "abc". Expected the page size: a non-negative integer',
      missing: ['parameters.config'],
    });
  });

  it('counts a key missing inside what is there as wrong: a job without its endpoint, a dataField object without its path', async () => {
    assert.match(
      (await problems({ ...base, config: { jobs: [{ endpiont: 'users' }] } })).invalid!,
      /^Invalid configuration at parameters\.config\.jobs\[0\]\.endpoint: is missing/,
    );
    assert.match(
      (await problems({ config: { jobs: [{ endpoint: 'u', dataField: {} }] } })).invalid!,
      /parameters\.config\.jobs\[0\]\.dataField\.path: is missing/,
    );
    // eslint-disable-next-line no-loss-of-precision -- the literal's rounding is what is tested
    assert.match((await problems({ ...base, n: 1e400 })).invalid!, /parameters\.n: is a number beyond the float range/);
  });
});
