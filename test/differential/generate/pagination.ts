import fc from 'fast-check';
import type { Collection, Paging } from '../case-model.js';
import type { JsonText } from '../json-text.js';

/**
 * Pagination knobs, independent of each other so fast-check can shrink them one by one. The API's
 * paging (what the server reads) is derived from the same knobs, so most cases page correctly and
 * some page wrongly — both sides must then go wrong in the same way.
 */
export interface PaginationKnobs {
  method: 'none' | 'pagenum' | 'offset' | 'cursor' | 'response.param' | 'response.url' | 'zendesk.response.url';
  inMultiple?: boolean;
  pageParam?: string;
  limitParam?: string;
  offsetParam?: string;
  limit?: JsonText;
  firstPage?: JsonText;
  firstPageParams?: JsonText;
  offsetFromJob?: JsonText;
  includeParams?: JsonText;
  paramIsQuery?: JsonText;
  cursorParam?: string;
  increment?: number;
  reverse?: boolean;
  tokenParam?: string;
  nextPageFlag?: { stopOn: boolean; ifNotSet?: boolean; wrongField?: boolean };
  forceStop?: { pages?: number; volume?: number };
  limitStop?: { byField?: boolean; count?: JsonText };
}

const paramName = fc.constantFrom(
  'page',
  'p',
  'limit',
  'per_page',
  'offset',
  'skip',
  'since',
  'cursor',
  'after',
  'pg x',
  'ü',
);

export const paginationKnobs: fc.Arbitrary<PaginationKnobs> = fc.record(
  {
    method: fc.constantFrom(
      'none',
      'pagenum',
      'offset',
      'cursor',
      'response.param',
      'response.url',
      'zendesk.response.url',
    ),
    inMultiple: fc.boolean(),
    pageParam: paramName,
    limitParam: paramName,
    offsetParam: paramName,
    limit: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constantFrom<JsonText>('2', ' 3', '', null)),
    firstPage: fc.constantFrom<JsonText>(0, 1, 2, '1'),
    firstPageParams: fc.constantFrom<JsonText>(true, false, 0, 'false'),
    offsetFromJob: fc.constantFrom<JsonText>(true, false),
    includeParams: fc.constantFrom<JsonText>(true, false, 1),
    paramIsQuery: fc.constantFrom<JsonText>(true, false),
    cursorParam: paramName,
    increment: fc.integer({ min: -1, max: 2 }),
    reverse: fc.boolean(),
    tokenParam: paramName,
    nextPageFlag: fc.record(
      { stopOn: fc.boolean(), ifNotSet: fc.boolean(), wrongField: fc.boolean() },
      { requiredKeys: ['stopOn'] },
    ),
    forceStop: fc.record({ pages: fc.integer({ min: 0, max: 3 }), volume: fc.integer({ min: 1, max: 400 }) }),
    limitStop: fc.record({
      byField: fc.boolean(),
      count: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constantFrom<JsonText>('3')),
    }),
  },
  { requiredKeys: ['method'] },
);

const GE_DEFAULTS = { page: 'page', limit: 'limit', offset: 'offset' };

/** The pagination object of `api` and the paging the API reads. */
export function buildPagination(knobs: PaginationKnobs, main: Collection): { pagination?: JsonText; paging: Paging } {
  const paging: Paging = {
    style: 'none',
    pageParam: knobs.pageParam ?? GE_DEFAULTS.page,
    limitParam: knobs.limitParam ?? GE_DEFAULTS.limit,
    offsetParam: knobs.offsetParam ?? GE_DEFAULTS.offset,
    cursorParam: knobs.cursorParam ?? 'since',
    tokenParam: knobs.tokenParam ?? 'token',
    firstPage: Number(knobs.firstPage ?? 1) || 0,
  };
  const p: Record<string, JsonText> = {};
  const set = (key: string, value: JsonText | undefined) => {
    if (value !== undefined) p[key] = value;
  };
  switch (knobs.method) {
    case 'none':
      break;
    case 'pagenum':
      paging.style = 'pagenum';
      p.method = 'pagenum';
      set('pageParam', knobs.pageParam);
      set('limit', knobs.limit);
      set('limitParam', knobs.limitParam);
      set('firstPage', knobs.firstPage);
      set('firstPageParams', knobs.firstPageParams);
      break;
    case 'offset':
      paging.style = 'offset';
      p.method = 'offset';
      p.limit = knobs.limit ?? main.pageSize;
      set('limitParam', knobs.limitParam);
      set('offsetParam', knobs.offsetParam);
      set('firstPageParams', knobs.firstPageParams);
      set('offsetFromJob', knobs.offsetFromJob);
      break;
    case 'cursor':
      paging.style = 'cursor';
      Object.assign(p, { method: 'cursor', idKey: 'id', param: paging.cursorParam });
      set('increment', knobs.increment);
      set('reverse', knobs.reverse);
      break;
    case 'response.param':
      paging.style = 'token';
      Object.assign(p, {
        method: 'response.param',
        responseParam: (main.envelope.token?.key ?? ['next_token']).join('.'),
        queryParam: paging.tokenParam,
      });
      set('includeParams', knobs.includeParams);
      break;
    case 'response.url':
    case 'zendesk.response.url':
      paging.style = 'url';
      p.method = knobs.method;
      if (main.envelope.next && main.envelope.next.key.join('.') !== 'next_page')
        p.urlKey = main.envelope.next.key.join('.');
      set('includeParams', knobs.includeParams);
      set('paramIsQuery', knobs.paramIsQuery);
      break;
  }
  if (knobs.method !== 'none') addStops(p, knobs, main);
  if (Object.keys(p).length === 0) return { paging };
  const pagination: JsonText =
    knobs.inMultiple && p.method ? { method: 'multiple', scrollers: { main: p }, default: 'main' } : p;
  return { pagination, paging };
}

function addStops(p: Record<string, JsonText>, knobs: PaginationKnobs, main: Collection): void {
  if (knobs.nextPageFlag && main.envelope.flag) {
    const flag: Record<string, JsonText> = {
      field: knobs.nextPageFlag.wrongField ? 'hasMore' : main.envelope.flag.key,
      stopOn: knobs.nextPageFlag.stopOn,
    };
    if (knobs.nextPageFlag.ifNotSet !== undefined) flag.ifNotSet = knobs.nextPageFlag.ifNotSet;
    p.nextPageFlag = flag;
  }
  if (knobs.forceStop) p.forceStop = { ...knobs.forceStop };
  if (knobs.limitStop) {
    const stop: Record<string, JsonText> = {};
    if (knobs.limitStop.byField && main.envelope.total) stop.field = main.envelope.total.key.join('.');
    else if (knobs.limitStop.count !== undefined) stop.count = knobs.limitStop.count;
    if (Object.keys(stop).length > 0) p.limitStop = stop;
  }
}
