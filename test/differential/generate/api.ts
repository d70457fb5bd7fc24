import fc from 'fast-check';
import type { Collection, Envelope } from '../case-model.js';
import { ordered, type JsonText } from '../json-text.js';
import { objectKey, placeholderText, responseValue, scalar, sometimes } from './values.js';

/**
 * A record: usually an object whose `id` is its position (so cursors work), with fields whose
 * presence and types change from record to record; sometimes a scalar or an array (APIs do that).
 */
const recordBody = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.uniqueArray(
      fc.tuple(
        objectKey.filter((k) => k !== 'id'),
        responseValue,
      ),
      { maxLength: 4, selector: ([k]) => k },
    ),
  },
  { weight: 1, arbitrary: scalar.map((v) => ({ scalar: v })) },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 2 }).map((v) => ({ list: v })) },
);

/** `labels[i]` (when there is one) is record i's `label`: text a child placeholder may put into its endpoint. */
function buildRecords(
  bodies: Array<[string, JsonText][] | { scalar: JsonText } | { list: JsonText[] }>,
  idStyle: 'int' | 'string' | 'none',
  labels: string[],
): JsonText[] {
  return bodies.map((body, i) => {
    if ('scalar' in body) return body.scalar;
    if ('list' in body) return body.list;
    const id: [string, JsonText][] = idStyle === 'none' ? [] : [['id', idStyle === 'int' ? i + 1 : String(i + 1)]];
    const label: [string, JsonText][] = i < labels.length ? [['label', labels[i]]] : [];
    return ordered([...id, ...label, ...body.filter(([k]) => k !== 'label')]);
  });
}

export const envelopeArb: fc.Arbitrary<Envelope> = fc.record(
  {
    dataPath: fc.constantFrom<string[] | null>(null, ['data'], ['items'], ['result', 'items'], ['0']),
    flag: fc.record({
      key: fc.constantFrom('has_more', 'more'),
      style: fc.constantFrom<'bool' | 'int' | 'string'>('bool', 'int', 'string'),
      omitAtEnd: fc.boolean(),
    }),
    next: fc.record({
      key: fc.constantFrom(['next_page'], ['next'], ['links', 'next']),
      form: fc.constantFrom<'absolute' | 'relative' | 'rooted' | 'query'>('absolute', 'relative', 'rooted', 'query'),
      atEnd: fc.constantFrom<'null' | 'missing' | 'empty' | 'false'>('null', 'missing', 'empty', 'false'),
    }),
    token: fc.record({
      key: fc.constantFrom(['next_token'], ['paging', 'token']),
      atEnd: fc.constantFrom<'null' | 'missing' | 'empty'>('null', 'missing', 'empty'),
    }),
    total: fc.record({ key: fc.constantFrom(['total'], ['meta', 'count']), asString: fc.boolean() }),
    extra: fc.uniqueArray(fc.tuple(fc.constantFrom('status', 'version', 'count', 'meta'), responseValue), {
      maxLength: 2,
      selector: ([k]) => k,
    }),
  },
  { requiredKeys: ['dataPath'] },
);

const failureArb = fc.record({
  atPage: fc.integer({ min: 0, max: 2 }),
  status: fc.constantFrom(200, 400, 404),
  body: fc.constantFrom(
    '{"broken": ',
    '<html>not json</html>',
    '{"error": "no"}',
    '',
    'null',
    '"text"',
    '[[]]',
    '[false]',
    '[0]',
    '[""]',
    '{}',
    '[]',
  ),
});

export const collectionArb: fc.Arbitrary<Collection> = fc
  .record({
    bodies: fc.array(recordBody, { maxLength: 10 }),
    idStyle: fc.constantFrom<'int' | 'string' | 'none'>('int', 'int', 'int', 'string', 'none'),
    pageSize: fc.integer({ min: 1, max: 5 }),
    envelope: envelopeArb,
    failure: sometimes(failureArb, 4),
    labels: fc.array(placeholderText, { maxLength: 10 }),
  })
  .map(({ bodies, idStyle, pageSize, envelope, failure, labels }) => ({
    records: buildRecords(bodies, idStyle, labels),
    pageSize,
    envelope,
    ...(failure ? { failure: { atStart: failure.atPage * pageSize, status: failure.status, body: failure.body } } : {}),
  }));
