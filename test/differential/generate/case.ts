import fc from 'fast-check';
import { BASE_URL, type DiffCase } from '../case-model.js';
import { ordered, type JsonText } from '../json-text.js';
import { collectionArb } from './api.js';
import { buildJob, jobKnobs } from './jobs.js';
import { buildPagination, paginationKnobs } from './pagination.js';
import { nestedValue, objectOf, oddString, scalar, sometimes } from './values.js';

/** Column mappings of a dataType: columns, user columns, nested tables, odd paths. */
const mappingEntry = fc.oneof(
  fc.tuple(
    fc.constantFrom('id', 'name', 'value', 'meta.id', 'tags', '', '0', '1', 'ü'),
    fc.constantFrom<JsonText>('id', 'col_name', 'Name', 'ü', 'a b'),
  ),
  fc.tuple(
    fc.constantFrom('id', 'name', 'meta', ''),
    fc
      .record({ destination: fc.constantFrom('pk', 'name', 'x'), primaryKey: fc.boolean() })
      .map(({ destination, primaryKey }): JsonText => ({
        type: 'column',
        mapping: { destination, ...(primaryKey ? { primaryKey: true } : {}) },
      })),
  ),
  fc.tuple(
    fc.constantFrom('extra', 'userCol'),
    fc.constant<JsonText>({ type: 'user', mapping: { destination: 'user_col' } }),
  ),
  fc.tuple(
    fc.constantFrom('tags', 'meta', 'items', ''),
    fc
      .record({ destination: fc.constantFrom('nested', 'tags', 'Nested'), parentKey: fc.boolean() })
      .map(({ destination, parentKey }): JsonText => ({
        type: 'table',
        destination,
        tableMapping: { id: 'id', '.': 'value', name: 'name' },
        ...(parentKey ? { parentKey: { destination: 'parent_id' } } : {}),
      })),
  ),
);

const mappingsArb = fc.record(
  {
    forJob: fc.uniqueArray(mappingEntry, { minLength: 1, maxLength: 4, selector: ([k]) => k }),
    orphanTable: fc.boolean(),
  },
  { requiredKeys: ['forJob'] },
);

const configKnobs = fc.record({
  userData: sometimes(objectOf(scalar, 3), 2),
  mappings: sometimes(mappingsArb, 2),
  compatLevel: sometimes(fc.constantFrom<JsonText>(1, 2, 3, '1'), 2),
  incrementalOutput: sometimes(fc.boolean()),
  outputBucket: sometimes(fc.constantFrom('bucket', 'in.c-odd', 'Ü bucket'), 2),
  headers: sometimes(objectOf(oddString, 2), 2),
  defaultParams: sometimes(objectOf(nestedValue, 3), 2),
  ignoreErrors: sometimes(fc.constant<JsonText>([400, 404]), 5),
  auth: sometimes(fc.constantFrom('basic', 'query'), 3),
  state: sometimes(fc.oneof(objectOf(scalar, 2), fc.constantFrom<JsonText>({ 'bucket.items': 'x' }, [], null)), 6),
});

export const diffCaseArb: fc.Arbitrary<DiffCase> = fc
  .record({
    collections: fc.array(collectionArb, { minLength: 3, maxLength: 3 }),
    pagination: paginationKnobs,
    jobs: fc.array(jobKnobs, { minLength: 1, maxLength: 2 }),
    config: configKnobs,
  })
  .map(({ collections, pagination: paginationChoice, jobs, config: knobs }): DiffCase => {
    const { pagination, paging } = buildPagination(paginationChoice, collections[0]);
    const api: Record<string, JsonText> = { baseUrl: `${BASE_URL}/` };
    if (pagination !== undefined) api.pagination = pagination;
    const http: Record<string, JsonText> = {};
    if (knobs.headers !== undefined) http.headers = knobs.headers;
    if (knobs.defaultParams !== undefined) http.defaultOptions = { params: knobs.defaultParams };
    if (knobs.ignoreErrors !== undefined) http.ignoreErrors = knobs.ignoreErrors;
    if (Object.keys(http).length > 0) api.http = http;
    const config: Record<string, JsonText> = {};
    if (knobs.auth === 'basic') {
      api.authentication = { type: 'basic' };
      Object.assign(config, { username: 'usér', '#password': 'pa:ss wörd' });
    }
    if (knobs.auth === 'query') api.authentication = { type: 'query', query: { apiKey: { attr: 'token' } } };
    if (knobs.auth === 'query') config.token = 'tok en/ü';
    const jobObjects = jobs.map((job, i) => buildJob(job, collections[i === 0 ? 0 : 2], i === 0 ? 0 : 2, collections));
    config.jobs = jobObjects;
    if (knobs.userData !== undefined) config.userData = knobs.userData;
    if (knobs.compatLevel !== undefined) config.compatLevel = knobs.compatLevel;
    if (knobs.incrementalOutput !== undefined) config.incrementalOutput = knobs.incrementalOutput;
    if (knobs.outputBucket !== undefined) config.outputBucket = knobs.outputBucket;
    if (knobs.mappings) {
      const dataType = jobs[0].dataType ?? String((jobObjects[0] as Record<string, JsonText>).endpoint);
      const mappings: [string, JsonText][] = [[dataType, ordered(knobs.mappings.forJob)]];
      if (knobs.mappings.orphanTable)
        mappings.push(['never_produced', { id: { type: 'column', mapping: { destination: 'id', primaryKey: true } } }]);
      config.mappings = ordered(mappings);
    }
    const parameters: JsonText = { api, config };
    return { parameters, api: { paging, collections }, ...(knobs.state !== undefined ? { state: knobs.state } : {}) };
  });
