import assert from 'node:assert/strict';
import { decodeJson, JsonFloat, type JsonValue } from '../../src/json/index.js';
import { findNonFiniteFloat, formatFloat, phpJsonRoundTrip, phpSprintf } from '../../src/php/index.js';

/** Expected values were taken from PHP 7.4 (the runtime of Generic Extractor). */
describe('php: floats as GE hands them on', () => {
  it('renders subnormals from their exact value, not their shortest form', () => {
    assert.equal(formatFloat(5e-324, 14), '4.9406564584125E-324');
    assert.equal(formatFloat(5e-324, 17, 'e'), '4.9406564584124654e-324');
    assert.equal(formatFloat(-1.5e-320, 14), '-1.499983300774E-320');
    assert.equal(formatFloat(2.2250738585072014e-308, 14), '2.2250738585072E-308');
  });

  it('JSON round trip at serialize_precision 17: integral floats below 1e17 come back as ints, others unchanged', () => {
    const decoded = decodeJson(
      '{"a":1.0,"b":1e15,"c":1e16,"d":-0.0,"e":1e17,"f":0.1,"g":5e-324,"h":[2.0,{"i":3e3}],"j":"1.0","k":123456789012345678,"l":9.007199254740993e15}',
    );
    const tripped = phpJsonRoundTrip(decoded) as Map<string, JsonValue>;
    assert.equal(tripped.get('a'), 1);
    assert.equal(tripped.get('b'), 1000000000000000);
    assert.equal(tripped.get('c'), 10000000000000000n, 'beyond 2^53 an int is a bigint');
    assert.ok(Object.is(tripped.get('d'), 0));
    assert.deepEqual(tripped.get('e'), new JsonFloat(1e17));
    assert.deepEqual(tripped.get('f'), new JsonFloat(0.1));
    assert.deepEqual(tripped.get('g'), new JsonFloat(5e-324));
    assert.deepEqual(tripped.get('h'), [2, new Map([['i', 3000]])]);
    assert.equal(tripped.get('j'), '1.0');
    assert.equal(tripped.get('k'), 123456789012345678n);
    assert.equal(tripped.get('l'), 9007199254740992n);
  });

  it('finds the first INF or NAN (JSON cannot hold them)', () => {
    assert.deepEqual(findNonFiniteFloat(decodeJson('{"a":[1,{"b":1e400}],"c":-1e400}')), ['a', 1, 'b']);
    assert.deepEqual(findNonFiniteFloat(decodeJson('{"a":[1.7976931348623157e308]}')), null);
  });

  describe('sprintf', () => {
    const f = (v: number) => new JsonFloat(v);
    const cases: Array<[string, JsonValue[], string | false]> = [
      ['%s|%s|%s', [f(1e17), 123456789012345678n, f(0.30000000000000004)], '1.0E+17|123456789012345678|0.3'],
      ['%g|%g|%g|%G|%.0g', [f(1e15), f(100000), f(0.00001), f(1e-5), f(123)], '1.0e+15|100000|1.0e-5|1.0E-5|1.0e+2'],
      ['%.0f|%.1f|%.2e|%5.2f|%.3F', [f(2.5), f(0.25), f(9.995), f(-1.005), f(2.0005)], '2|0.2|9.99e+0|-1.00|2.001'],
      ['%f|%.20f', [f(1e21), f(0.1)], '1000000000000000000000.000000|0.10000000000000000555'],
      [
        '%d|%d|%u|%x|%X',
        [f(1e20), f(-1e19), -1, f(255.9), -255],
        '7766279631452241920|8446744073709551616|18446744073709551615|ff|FFFFFFFFFFFFFF01',
      ],
      [
        "%05d|%-05d|%-05s|%+05.1f|%'*6s|%-05x",
        [-12, -12, 'ab', f(-2.25), 'x', 255],
        '-0012|-12  |ab000|-02.2|*****x|ff000',
      ],
      ['%f|%05f|%+05g|%e|%g', [f(-Infinity), f(-Infinity), f(NaN), f(-0), f(-0)], 'INF|-NF|+aN|0.000000e+0|-0'],
      ['%d|%d|%.f|%5.1s|%c', ['12abc', '1e3', f(1.5), 'abc', 321], '12|1000|1.500000|    a|A'],
      ['%1$s-%1$05d|%s|%y%s|100%%|end%', [7, 'x', 'y', 'z'], '7-00007|7|y|100%|end'],
      ['%1$s-%1$05d|%s|%y%s|100%%|end%', [7, 'x', 'y'], false],
      ['%s %s', ['a'], false],
      ['%0$s', ['a'], false],
    ];
    for (const [format, args, expected] of cases) {
      it(`${format} → ${JSON.stringify(expected)}`, () => assert.equal(phpSprintf(format, args), expected));
    }
  });
});
