import assert from 'node:assert/strict';
import { flattenContext, UserFunctions } from '../../../src/extractor/functions/user-functions.js';
import { decodeJson, fromPlain, stringifyExact } from '../../../src/json/index.js';

const fns = new UserFunctions();
const run = (json: string, contexts: Record<string, unknown> = {}) =>
  stringifyExact(
    fns.evaluate(
      decodeJson(json),
      Object.fromEntries(Object.entries(contexts).map(([k, v]) => [k, flattenContext(fromPlain(v))])),
    ),
  );

describe('user functions (codebuilder semantics)', () => {
  it('hashes, encodes and formats like PHP (GE docs values)', () => {
    assert.equal(run('{"function":"md5","args":["NotSoSecret"]}'), '"1228d3ff5089f27721f1e0403ad86e73"');
    assert.equal(
      run('{"function":"hash_hmac","args":["sha256","12345abcd5678efgh90ijk","TeaPot"]}'),
      '"d868d581b2f2edd09e8e7ce12c00723b3fcffb6a5d74c40eae9d94181a0bf731"',
    );
    assert.equal(
      run('{"function":"base64_encode","args":[{"function":"concat","args":["JohnDoe",":","TopSecret"]}]}'),
      '"Sm9obkRvZTpUb3BTZWNyZXQ="',
    );
    assert.equal(run('{"function":"sprintf","args":["%\'.05d",3]}'), '"00003"');
    assert.equal(run('{"function":"implode","args":[",",["a","b"]]}'), '"a,b"');
    assert.equal(run('{"function":"hash","args":["sha1","x"]}'), '"11f6ad8ec52a2984abaafd7c3b516503785c2072"');
  });

  it('sprintf with fewer arguments than the format needs is false, as PHP 7.4 returns (GE sends false)', () => {
    assert.equal(run('{"function":"sprintf","args":["%s-%s","a"]}'), 'false');
    assert.equal(run('{"function":"sprintf","args":["%s-%d-%.2f",2.5,1]}'), 'false');
    assert.equal(run('{"function":"sprintf","args":["%2$s %1$s","a"]}'), 'false');
    assert.equal(run('{"function":"sprintf","args":["100%% %s","a"]}'), '"100% a"');
    assert.equal(run('{"function":"sprintf","args":["%2$s %1$s","a","b"]}'), '"b a"');
  });

  it('evaluates dates in UTC and relative times', () => {
    assert.equal(
      run(
        '{"function":"date","args":["Y-m-d",{"function":"strtotime","args":["+7 days",{"function":"strtotime","args":["2017-10-04"]}]}]}',
      ),
      '"2017-10-11"',
    );
    assert.equal(
      run('{"function":"date","args":["Y-m-d H:i:s",{"time":"previousStart"}]}', {
        time: { previousStart: 1492606006 },
      }),
      '"2017-04-19 12:46:46"',
    );
    assert.equal(run('{"function":"strtotime","args":["-1 day",1500000000]}'), '1499913600');
  });

  it('resolves context references with dotted keys, and plain objects member by member', () => {
    assert.equal(run('{"attr":"server.port"}', { attr: { server: { port: 8080 } } }), '8080');
    assert.equal(
      run('{"filter":{"userName":{"attr":"credentials.#username"}}}', {
        attr: { credentials: { '#username': 'JohnDoe' } },
      }),
      '{"filter":{"userName":"JohnDoe"}}',
    );
    assert.equal(run('{"notacontext":"x"}', { attr: {} }), '{"notacontext":"x"}');
  });

  it('ifempty picks the second argument for PHP-empty values', () => {
    assert.equal(run('{"function":"ifempty","args":["","all"]}'), '"all"');
    assert.equal(run('{"function":"ifempty","args":["id,name","all"]}'), '"id,name"');
    assert.throws(
      () => run('{"function":"ifempty","args":["a"]}'),
      /User script error: Bad argument count for function 'ifempty'!/,
    );
  });

  it('fails clearly on unknown functions, missing references and wrong arguments', () => {
    assert.throws(() => run('{"function":"exec","args":["rm"]}'), /User script error: Illegal function 'exec'!/);
    assert.throws(
      () => run('{"attr":"missing"}', { attr: {} }),
      /Error evaluating user function - attr 'missing' not found!/,
    );
    assert.throws(
      () => run('{"function":"md5","args":[["a"]]}'),
      /md5\(\) expects parameter 1 to be string, array given/,
    );
    assert.throws(() => run('{"function":"urlencode","args":["a b"]}'), /Illegal function 'urlencode'/);
    assert.equal(
      stringifyExact(fns.withUrlencode().evaluate(decodeJson('{"function":"urlencode","args":["a b/c"]}'), {})),
      '"a+b%2Fc"',
    );
  });
});
