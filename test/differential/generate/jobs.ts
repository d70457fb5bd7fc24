import fc from 'fast-check';
import type { Collection } from '../case-model.js';
import { ordered, type JsonText } from '../json-text.js';
import { nestedValue, objectOf, oddString, scalar } from './values.js';

/** Knobs of one job; `buildJob` turns them into GE's job object for a collection. */
export interface JobKnobs {
  endpoint: 'plain' | 'nested' | 'slash' | 'query' | 'unicode' | 'trailing';
  dataType?: string;
  dataField?: 'match' | 'wrong' | 'empty' | 'dot';
  params?: JsonText;
  method?: string;
  responseFilter?: 'one' | 'list' | 'missing';
  child?: ChildKnobs;
}

export interface ChildKnobs {
  endpoint: 'path' | 'query' | 'two' | 'none';
  /** `label`: the record's label, text with control characters and URL delimiters */
  placeholder: 'id' | 'nested' | 'missing' | 'level' | 'empty' | 'label';
  dataType?: string;
  dataField?: 'match' | 'wrong';
  recursionFilter?: string;
  params?: JsonText;
  grandchild?: DescendantKnobs;
}

/**
 * A child of a child (and its own child): placeholders inherited from the ancestors only (`none`),
 * a new own one (`own`), an ancestor's name with its own value (`shadow`, `shadowLabel`), one
 * reaching the top-level record by level prefix (`level`), or a list that fans out (`list`).
 */
export interface DescendantKnobs {
  placeholders: 'none' | 'own' | 'shadow' | 'shadowLabel' | 'level' | 'list';
  method?: 'GET' | 'POST';
  params?: JsonText;
  recursionFilter?: string;
  child?: DescendantKnobs;
}

const dataTypeArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('items', 'users', 'Orders', 'a-b', 'a.b', 'x y', 'data', 'items_children', 'a__b', '_x'),
  },
  { weight: 1, arbitrary: oddString.filter((s) => s.trim() !== '' && !/[/\\\0]/.test(s) && s !== '.' && s !== '..') },
);

/** Request parameters: every JSON type, user functions, nested objects. */
export const paramsArb: fc.Arbitrary<JsonText> = fc.oneof(
  { weight: 5, arbitrary: objectOf(nestedValue, 4) },
  { weight: 1, arbitrary: fc.constantFrom<JsonText>([], {}, null) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('md5', 'sha1', 'base64_encode', 'concat', 'implode', 'sprintf', 'ifempty', 'urlencode', 'hash'),
        fc.array(scalar, { maxLength: 3 }),
      )
      .map(([fn, args]): JsonText => {
        const fnArgs: JsonText[] =
          fn === 'implode'
            ? [',', args]
            : fn === 'sprintf'
              ? ['%s-%d-%.2f', ...args]
              : fn === 'hash'
                ? ['sha256', args[0] ?? '']
                : fn === 'concat'
                  ? args
                  : [args[0] ?? ''];
        return { q: { function: fn, args: fnArgs }, plain: 1 };
      }),
  },
);

const descendantFields = {
  placeholders: fc.constantFrom<DescendantKnobs['placeholders']>(
    'none',
    'none',
    'own',
    'shadow',
    'shadowLabel',
    'level',
    'list',
  ),
  method: fc.constantFrom<'GET' | 'POST'>('GET', 'GET', 'POST'),
  params: fc.constantFrom<JsonText>({ p: 1 }, { q: 'a b' }),
  recursionFilter: fc.constantFrom('id>1', 'id<3', 'id!=2'),
};
const greatGrandchildArb: fc.Arbitrary<DescendantKnobs> = fc.record(descendantFields, {
  requiredKeys: ['placeholders'],
});
const grandchildArb: fc.Arbitrary<DescendantKnobs> = fc.record(
  { ...descendantFields, child: greatGrandchildArb },
  { requiredKeys: ['placeholders'] },
);

const childArb: fc.Arbitrary<ChildKnobs> = fc.record(
  {
    endpoint: fc.constantFrom<ChildKnobs['endpoint']>('path', 'path', 'query', 'two', 'none'),
    placeholder: fc.constantFrom<ChildKnobs['placeholder']>(
      'id',
      'id',
      'nested',
      'missing',
      'level',
      'empty',
      'label',
      'label',
    ),
    dataType: dataTypeArb,
    dataField: fc.constantFrom<'match' | 'wrong'>('match', 'match', 'wrong'),
    recursionFilter: fc.constantFrom('id>1', 'id<3', 'name==a', 'type!=x', 'id>1|id<0', 'value~a%'),
    params: paramsArb,
    grandchild: grandchildArb,
  },
  { requiredKeys: ['endpoint', 'placeholder'] },
);

export const jobKnobs: fc.Arbitrary<JobKnobs> = fc.record(
  {
    endpoint: fc.constantFrom<JobKnobs['endpoint']>(
      'plain',
      'plain',
      'nested',
      'slash',
      'query',
      'unicode',
      'trailing',
    ),
    dataType: dataTypeArb,
    dataField: fc.constantFrom<NonNullable<JobKnobs['dataField']>>('match', 'match', 'wrong', 'empty', 'dot'),
    params: paramsArb,
    method: fc.constantFrom('GET', 'POST', 'FORM', 'post'),
    responseFilter: fc.constantFrom<NonNullable<JobKnobs['responseFilter']>>('one', 'list', 'missing'),
    child: childArb,
  },
  { requiredKeys: ['endpoint'] },
);

const ENDPOINTS: Record<JobKnobs['endpoint'], (c: string) => string> = {
  plain: (c) => c,
  nested: (c) => `${c}/list`,
  slash: (c) => `/${c}`,
  query: (c) => `${c}?fixed=1&x=a b`,
  unicode: (c) => `${c}/ü/😀`,
  trailing: (c) => `${c}/`,
};

function dataFieldFor(choice: JobKnobs['dataField'], collection: Collection): JsonText | undefined {
  const path = collection.envelope.dataPath;
  switch (choice) {
    case undefined:
      return undefined;
    case 'match':
      return path === null ? undefined : path.join('.');
    case 'wrong':
      return 'nope';
    case 'empty':
      return '';
    case 'dot':
      return '.';
  }
}

export function buildJob(knobs: JobKnobs, collection: Collection, index: number, collections: Collection[]): JsonText {
  const job: Record<string, JsonText> = { endpoint: ENDPOINTS[knobs.endpoint](`c${index}`) };
  if (knobs.dataType !== undefined) job.dataType = knobs.dataType;
  const dataField = dataFieldFor(knobs.dataField, collection);
  if (dataField !== undefined) job.dataField = dataField;
  if (knobs.params !== undefined) job.params = knobs.params;
  if (knobs.method !== undefined) job.method = knobs.method;
  if (knobs.responseFilter === 'one') job.responseFilter = 'meta';
  if (knobs.responseFilter === 'list') job.responseFilter = ['meta', 'tags'];
  if (knobs.responseFilter === 'missing') job.responseFilter = 'nothing.here';
  if (knobs.child) job.children = [buildChild(knobs.child, collections, 1)];
  return job;
}

/** Derived from a knob the cases already draw, so adding it changed no generated case but this key. */
const CHILD_CONCURRENCY: Record<ChildKnobs['endpoint'], number | undefined> = {
  path: 4,
  query: undefined,
  two: 8,
  none: 2,
};

function buildChild(knobs: ChildKnobs, collections: Collection[], level: number): JsonText {
  const index = Math.min(level, collections.length - 1);
  const collection = collections[index];
  const c = `c${index}`;
  const endpoint = { path: `${c}/{id}`, query: `${c}?parent={id}`, two: `${c}/{id}/{id2}`, none: `${c}/detail` }[
    knobs.endpoint
  ];
  const placeholders: JsonText = {
    id: { id: 'id' },
    nested: { id: 'meta.id' },
    missing: { id: 'no_such_key' },
    level: { id: `${level}:id` },
    empty: {},
    label: { id: 'label' },
  }[knobs.placeholder];
  const child: Record<string, JsonText> = { endpoint, placeholders };
  if (
    knobs.endpoint === 'two' &&
    placeholders &&
    typeof placeholders === 'object' &&
    !Array.isArray(placeholders) &&
    !('$number' in placeholders)
  ) {
    (placeholders as Record<string, JsonText>).id2 = 'name';
  }
  if (knobs.dataType !== undefined) child.dataType = knobs.dataType;
  const dataField = dataFieldFor(knobs.dataField, collection);
  if (dataField !== undefined) child.dataField = dataField;
  if (knobs.recursionFilter !== undefined) child.recursionFilter = knobs.recursionFilter;
  if (knobs.params !== undefined) child.params = knobs.params;
  // gex's child concurrency (GE ignores the key): fetched ahead, the output must still be GE's
  const concurrency = CHILD_CONCURRENCY[knobs.endpoint];
  if (concurrency !== undefined) child.concurrency = concurrency;
  if (knobs.grandchild) child.children = [buildDescendant(knobs.grandchild, collections, level + 1)];
  return child;
}

/**
 * A child at `level` (2 or 3) under a child whose placeholder is `{id}` (and maybe `{id2}`): its
 * endpoint uses the inherited `{id}` and `{id2}`, so a run without own placeholders shows the
 * inherited values, and a shadowing one its own value in their place.
 */
function buildDescendant(knobs: DescendantKnobs, collections: Collection[], level: number): JsonText {
  const c = `c${Math.min(level, collections.length - 1)}`;
  const own: Record<DescendantKnobs['placeholders'], [string, JsonText][]> = {
    none: [],
    own: [[`sub${level}`, 'id']],
    shadow: [['id', 'id']],
    shadowLabel: [['id', 'label']],
    level: [[`${level}:top`, 'id']],
    list: [['tag', 'tags']],
  };
  const placeholders = own[knobs.placeholders];
  const extra = placeholders.map(([name]) => (name === 'id' ? '' : `/{${name}}`)).join('');
  const child: Record<string, JsonText> = { endpoint: `${c}/l${level}/{id}/{id2}${extra}`, dataType: `level${level}` };
  if (placeholders.length > 0) child.placeholders = ordered(placeholders);
  if (knobs.method !== undefined) child.method = knobs.method;
  if (knobs.params !== undefined) child.params = knobs.params;
  if (knobs.recursionFilter !== undefined) child.recursionFilter = knobs.recursionFilter;
  if (knobs.child && level < 3) child.children = [buildDescendant(knobs.child, collections, level + 1)];
  return child;
}
