import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { DataFolder } from '../../../src/extractor/data-folder.js';
import { extract } from '../../../src/extractor/extractor.js';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { captureLogger, makeDataDir } from '../../support/extraction.js';

/**
 * Floats in requests, byte for byte as Generic Extractor (PHP 7.4) sends them — the expected
 * requests were recorded from the real GE with the same configurations. Configurations are raw
 * JSON text: `1.0` and `-0.0` must reach gex as written.
 */
describe('floats in requests', () => {
  let server: FixtureServer;
  const FLOATS =
    '"a":1.5,"b":0.1,"c":1e15,"d":1e16,"e":1e22,"f":1.0,"g":-0.0,"h":5e-324,"i":2.2250738585072014e-308,"j":1e-7,"k":123456789012345678,"l":12345678901234567890,"m":0.30000000000000004,"q":123456789012345.6,"r":[0.1,{"s":2.5}]';

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        if (url.pathname === '/parents')
          return { body: '{"items":[{"id":1.0},{"id":1e20},{"id":0.1},{"id":-0.0},{"id":5e-324}]}' };
        const page = Number(/"page":(\d+)/.exec(r.body)?.[1] ?? url.searchParams.get('page') ?? 1);
        return { body: { items: page <= 2 ? [{ id: page }] : [] } };
      },
    });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  async function run(config: string): Promise<void> {
    const dataDir = await makeDataDir(`{"parameters":{"api":{"baseUrl":"${server.url}/"${config}}}`);
    try {
      await extract(await new DataFolder(dataDir).read(), {
        dataDir,
        logger: captureLogger().logger,
        now: () => 1700000000,
      });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  it('GET query, JSON body and form body', async () => {
    await run(`},"config":{"outputBucket":"b","jobs":[
      {"endpoint":"get","dataField":"items","params":{${FLOATS}}},
      {"endpoint":"post","method":"POST","dataField":"items","params":{${FLOATS}}},
      {"endpoint":"form","method":"FORM","dataField":"items","params":{${FLOATS}}}]}`);
    const query =
      'a=1.5&b=0.1&c=1000000000000000&d=10000000000000000&e=1.0E%2B22&f=1&g=0&h=4.9406564584125E-324&i=2.2250738585072E-308&j=1.0E-7' +
      '&k=123456789012345678&l=1.2345678901235E%2B19&m=0.3&q=1.2345678901235E%2B14&r%5B0%5D=0.1&r%5B1%5D%5Bs%5D=2.5';
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.url, r.body]),
      [
        ['GET', `/get?${query}`, ''],
        [
          'POST',
          '/post',
          '{"a":1.5,"b":0.10000000000000001,"c":1000000000000000,"d":10000000000000000,"e":1.0e+22,"f":1,"g":0,"h":4.9406564584124654e-324,' +
            '"i":2.2250738585072014e-308,"j":9.9999999999999995e-8,"k":123456789012345678,"l":1.2345678901234567e+19,"m":0.30000000000000004,' +
            '"q":123456789012345.59,"r":[0.10000000000000001,{"s":2.5}]}',
        ],
        ['POST', '/form', query],
      ],
    );
  });

  it('every page of a paginated POST job renders its floats alike', async () => {
    await run(`,"pagination":{"method":"pagenum"}},"config":{"outputBucket":"b","jobs":[
      {"endpoint":"post","method":"POST","dataField":"items","params":{"b":0.1,"c":1e15,"g":-0.0}}]}`);
    assert.deepEqual(
      server.requests.map((r) => r.body),
      [1, 2, 3].map((page) => `{"b":0.10000000000000001,"c":1000000000000000,"g":0,"page":${page}}`),
    );
  });

  it("a parent's float in a child's endpoint, plain and through a function", async () => {
    await run(`},"config":{"outputBucket":"b","jobs":[{"endpoint":"parents","dataField":"items","children":[
      {"endpoint":"child/{id}","dataField":"items","placeholders":{"id":"id"}},
      {"endpoint":"fn/{id}","dataField":"items","placeholders":{"id":{"path":"id","function":"concat","args":[1e15,"-",{"placeholder":"value"}]}}}]}]}`);
    const values = ['1', '1.0E+20', '0.1', '-0', '4.9406564584125E-324'];
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/parents', ...values.map((v) => `/child/${v}`), ...values.map((v) => `/fn/1000000000000000-${v}`)],
    );
  });

  it('floats in user functions and headers', async () => {
    await run(`,"http":{"headers":{"X-A":1e15,"X-B":{"function":"concat","args":[1e15,"|",1.0,"|",0.1]}}}},"config":{"outputBucket":"b","jobs":[
      {"endpoint":"get","dataField":"items","params":{
        "c":{"function":"concat","args":[1e15,"|",-0.0,"|",1e22,"|",5e-324]},
        "s":{"function":"sprintf","args":["%s|%d|%.3f|%e|%g|%.20f",1e15,1.9,0.1,0.1,1e15,0.1]},
        "t":{"function":"sprintf","args":["%s|%s|%s",1e17,123456789012345678,0.30000000000000004]},
        "m":{"function":"md5","args":[1e15]}}}]}`);
    const [request] = server.requests;
    const params = new URL(request.url, 'http://x').searchParams;
    assert.equal(params.get('c'), '1000000000000000|0|1.0E+22|4.9406564584125E-324');
    assert.equal(params.get('s'), '1000000000000000|1|0.100|1.000000e-1|1.0e+15|0.10000000000000000555');
    assert.equal(params.get('t'), '1.0E+17|123456789012345678|0.3');
    assert.equal(params.get('m'), 'aa7372eaa327ee4372711da7f26f73c5', 'md5 of "1000000000000000"');
    assert.equal(request.headers['x-a'], '1000000000000000');
    assert.equal(request.headers['x-b'], '1000000000000000|1|0.1');
  });

  it('a number beyond the float range in the configuration is refused before any request', async () => {
    await assert.rejects(
      run(
        `},"config":{"outputBucket":"b","jobs":[{"endpoint":"get","dataField":"items","params":{"a":1,"x":[1e400]}}]}`,
      ),
      /Invalid configuration at parameters\.config\.jobs\[0\]\.params\.x\[0\]: is a number beyond the float range/,
    );
    assert.equal(server.requests.length, 0);
  });
});
