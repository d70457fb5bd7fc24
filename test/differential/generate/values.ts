import fc from 'fast-check';
import { num, ordered, type JsonText } from '../json-text.js';

/** Strings that have tripped extractors: unicode, separators, numeric look-alikes, control characters. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'a',
      'abc',
      'Hello World',
      'x-y',
      'a.b',
      'a,b',
      'a"b',
      "it's",
      'a;b',
      'a&b=c',
      'a+b',
      'a/b',
      'a?b#c',
      '%41',
      '%',
    ),
  },
  { weight: 2, arbitrary: fc.constantFrom('ü', 'Žluťoučký kůň', '日本語', '😀', 'e\u0301', '\u00a0', 'Ω≈ç√') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '0',
      '00',
      '007',
      '1',
      '-1',
      '1.0',
      '1e3',
      ' 1',
      '0x1A',
      'true',
      'false',
      'null',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('a\nb', 'tab\there', 'cr\rx', 'back\\slash', '\u2028') },
  { weight: 2, arbitrary: fc.string({ maxLength: 6 }) },
);

/** Number literals as JSON spells them: integers, big integers, floats with PHP-relevant spellings. */
export const numberLiteral: fc.Arbitrary<JsonText> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -5, max: 1000 }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        '9007199254740993',
        '9223372036854775807',
        '9223372036854775808',
        '-9223372036854775809',
        '12345678901234567890',
      )
      .map(num),
  },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        '1.5',
        '0.1',
        '1.0',
        '-0.0',
        '0.0',
        '2.50',
        '1e15',
        '1E3',
        '1e+2',
        '1e-7',
        '1.5e300',
        '5e-324',
        '123456.789',
        '0.30000000000000004',
        '3.141592653589793',
        '1e22',
        '100000000000000000000.0',
      )
      .map(num),
  },
);

export const scalar: fc.Arbitrary<JsonText> = fc.oneof(
  { weight: 4, arbitrary: oddString },
  { weight: 4, arbitrary: numberLiteral },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
);

/** Keys of generated objects: plain, numeric, empty, clashing with generated column names. */
export const objectKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('id', 'name', 'value', 'type', 'meta', 'tags', 'items', 'Name') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '0',
      '1',
      '10',
      'ü',
      'a b',
      'a.b',
      'a-b',
      'a_b',
      '_',
      'x__y',
      'JSON_parentId',
      'parent_id',
      'data',
      '',
    ),
  },
);

/** An object with keys in a fixed order, duplicates removed. */
export function objectOf(value: fc.Arbitrary<JsonText>, maxKeys = 4): fc.Arbitrary<JsonText> {
  return fc
    .uniqueArray(fc.tuple(objectKey, value), { maxLength: maxKeys, selector: ([k]) => k })
    .map((entries) => ordered(entries));
}

/** Values nested a few levels: objects, arrays of scalars, arrays of objects, empty containers. */
export const nestedValue: fc.Arbitrary<JsonText> = fc.letrec<{ value: JsonText }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 3 }) },
    { weight: 1, arbitrary: objectOf(tie('value'), 3) },
  ),
})).value;

/** Every control character PHP's parse_url replaces (0x00–0x1F, 0x7F), inside, around or alone. */
const controlCharacter = fc
  .oneof(fc.integer({ min: 0, max: 0x1f }), fc.constant(0x7f))
  .map((c) => String.fromCharCode(c));

/**
 * Texts a record may hand to a placeholder: control characters (a newline from an API), text
 * parse_url reads as a scheme (`a:b`), C1 controls, URL delimiters. Not `1:80`: GE's Guzzle
 * reads `c1/1:80` as host `c1` (as gex does), and retries a host that does not exist for ~17
 * minutes where gex fails at once (a listed difference) — a case would only time out.
 */
export const placeholderText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom('', 'a', ' x'), controlCharacter, fc.constantFrom('', 'b', '\n'))
      .map((parts) => parts.join('')),
  },
  { weight: 2, arbitrary: fc.constantFrom('a:b', 'ab:', '//h', 'a?b', 'a#b', '%0A', '\u0085', 'ü', ' ', 'a/b') },
  { weight: 1, arbitrary: oddString },
);

/** Numbers beyond the float range (INF and -INF in PHP), as an API may send them. */
export const outOfRangeNumber: fc.Arbitrary<JsonText> = fc.constantFrom('1e400', '-1e400', '1E999', '-2e308').map(num);

/** Values of API records: nested values whose numbers are sometimes beyond the float range, at any depth. */
export const responseValue: fc.Arbitrary<JsonText> = fc.letrec<{ value: JsonText }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: scalar },
    { weight: 1, arbitrary: outOfRangeNumber },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 3 }) },
    { weight: 1, arbitrary: objectOf(tie('value'), 3) },
  ),
})).value;

/** `arbitrary` in about one case of `1 + rarity`, otherwise undefined (an absent key). */
export function sometimes<T>(arbitrary: fc.Arbitrary<T>, rarity = 1): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: rarity, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}
