import assert from 'node:assert/strict';
import { formatFloat, roundedFloat } from '../../src/php/index.js';

describe('php: float rendering', () => {
  const csv: Array<[number, string]> = [
    [1.0, '1'],
    [0.1, '0.1'],
    [0.1 + 0.2, '0.3'],
    [1e2, '100'],
    [1.5e-7, '1.5E-7'],
    [1e14, '1.0E+14'],
    [99999999999999.0, '99999999999999'],
    [0.00001234, '1.234E-5'],
    [0.0001, '0.0001'],
    [1e20, '1.0E+20'],
    // eslint-disable-next-line no-loss-of-precision -- the literal's rounding is what is tested
    [123456789012345678901, '1.2345678901235E+20'],
    // eslint-disable-next-line no-loss-of-precision -- the literal's rounding is what is tested
    [3.14159265358979323, '3.1415926535898'],
    [-0.0, '-0'],
    [-2.5, '-2.5'],
    [10000000000000.5, '10000000000000'],
    [10000000000001.5, '10000000000002'],
    [1.5, '1.5'],
  ];
  for (const [value, expected] of csv) {
    it(`precision 14: ${value} -> ${expected}`, () => assert.equal(formatFloat(value, 14, 'E'), expected));
  }

  const p17: Array<[number, string]> = [
    [0.1, '0.10000000000000001'],
    [1.0, '1'],
    [1.5e-7, '1.4999999999999999e-7'],
    [1e20, '1.0e+20'],
    [1e25, '1.0000000000000001e+25'], // 1e25 is not exact in binary: 17 digits show it
  ];
  for (const [value, expected] of p17) {
    it(`precision 17: ${value} -> ${expected}`, () => assert.equal(formatFloat(value, 17, 'e'), expected));
  }

  it('shortest round-trip form for request bodies', () => {
    assert.equal(formatFloat(0.1 + 0.2, 'shortest', 'e'), '0.30000000000000004');
    assert.equal(formatFloat(1.0, 'shortest', 'e'), '1');
    assert.equal(formatFloat(0.1, 'shortest', 'e'), '0.1');
  });

  it('renders infinities like PHP', () => {
    assert.equal(formatFloat(Infinity), 'INF');
    assert.equal(formatFloat(-Infinity), '-INF');
  });

  it('takes its shortcut only where the general algorithm agrees', () => {
    // a fixed-seed generator: values of every magnitude, short and long digit strings
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 50_000; i++) {
      const magnitude = 10 ** Math.floor(random() * 30 - 10);
      const digits = 1 + Math.floor(random() * 17);
      const value = (random() < 0.5 ? -1 : 1) * Number((random() * magnitude).toPrecision(digits));
      if (value === 0) continue;
      for (const precision of [14, 17])
        assert.equal(
          formatFloat(value, precision, 'E'),
          roundedFloat(value, precision, 'E'),
          `${value} at ${precision}`,
        );
    }
  });

  it('takes its shortcut at 17 digits only for exact decimals (prices, halves, quarters, …)', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 50_000; i++) {
      // dyadic values (exact short decimals) next to their decimal neighbours (inexact)
      const value = Math.floor(random() * 2 ** 40) / 2 ** Math.floor(random() * 30) - (random() < 0.5 ? 0 : 0.01);
      if (value === 0) continue;
      for (const precision of [16, 17])
        assert.equal(
          formatFloat(value, precision, 'E'),
          roundedFloat(value, precision, 'E'),
          `${value} at ${precision}`,
        );
    }
    assert.equal(formatFloat(12.25, 17, 'E'), '12.25');
    assert.equal(formatFloat(0.1, 17, 'E'), '0.10000000000000001');
  });
});
