import type { ApiModel, Collection, Envelope } from './case-model.js';
import { entriesOf, isNumberLiteral, ordered, toJsonText, type JsonText } from './json-text.js';

/** The most requests the API answers in one run: a run that would page forever gets 400s after it. */
export const REQUEST_BUDGET = 60;

export interface ApiRequest {
  method: string;
  /** the raw request target: path and query exactly as sent */
  target: string;
  body: string;
  contentType: string | undefined;
}

export interface ApiAnswer {
  status: number;
  body: string | Buffer;
  headers: Record<string, string>;
}

const JSON_TYPE = { 'Content-Type': 'application/json' };

/**
 * The answer of a case's API to a request: a pure function of the model, the request and how many
 * requests came before in this run, so GE and gex face exactly the same API and any difference in
 * what they send shows up as a difference in what they get.
 */
export function answer(model: ApiModel, request: ApiRequest, index: number, origin: string): ApiAnswer {
  if (index >= REQUEST_BUDGET) return json(400, { error: 'request budget of the differential API exhausted' });
  const path = request.target.split('?')[0];
  if (/(^|\/)login(\/|$)/.test(path) && model.login !== undefined)
    return { status: 200, body: toJsonText(model.login), headers: JSON_TYPE };
  const params = requestParams(request);
  const collection = model.collections[collectionIndex(path, model.collections.length)];
  const { start, size } = pageWindow(model, collection, params);
  if (collection.failure && collection.failure.atStart === start) {
    return { status: collection.failure.status, body: collection.failure.body, headers: JSON_TYPE };
  }
  const records = collection.records.slice(start, start + size);
  const more = start + size < collection.records.length;
  return {
    status: 200,
    body: toJsonText(
      envelope(collection.envelope, records, more, start + size, collection.records.length, path, origin),
    ),
    headers: JSON_TYPE,
  };
}

function json(status: number, value: JsonText): ApiAnswer {
  return { status, body: toJsonText(value), headers: JSON_TYPE };
}

/** `cN` anywhere in the path picks collection N; any other path gets collection 0. */
function collectionIndex(path: string, count: number): number {
  const match = /(?:^|\/)c(\d+)(?:\/|$)/.exec(decodeSafely(path));
  return match ? Number(match[1]) % count : 0;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Query and body parameters by their top-level names (the body as JSON or as a form). */
function requestParams(request: ApiRequest): Map<string, string> {
  const params = new Map<string, string>();
  const query = request.target.includes('?') ? request.target.slice(request.target.indexOf('?') + 1) : '';
  for (const [k, v] of new URLSearchParams(query)) params.set(k, v);
  if (request.body !== '') {
    try {
      const body = JSON.parse(request.body) as unknown;
      if (body && typeof body === 'object' && !Array.isArray(body)) {
        for (const [k, v] of Object.entries(body)) params.set(k, typeof v === 'string' ? v : JSON.stringify(v));
      }
    } catch {
      for (const [k, v] of new URLSearchParams(request.body)) params.set(k, v);
    }
  }
  return params;
}

function toInt(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number.parseInt(text, 10);
  return Number.isFinite(n) ? n : fallback;
}

function pageWindow(
  model: ApiModel,
  collection: Collection,
  params: Map<string, string>,
): { start: number; size: number } {
  const { paging } = model;
  const requested = toInt(params.get(paging.limitParam), 0);
  const size = requested > 0 ? Math.min(requested, 50) : collection.pageSize;
  let start = 0;
  switch (paging.style) {
    case 'none':
      return { start: 0, size: collection.records.length };
    case 'pagenum':
      start = (toInt(params.get(paging.pageParam), paging.firstPage) - paging.firstPage) * size;
      break;
    case 'offset':
      start = toInt(params.get(paging.offsetParam), 0);
      break;
    case 'cursor': {
      const after = params.get(paging.cursorParam);
      if (after !== undefined) {
        const bound = Number(after);
        const index = collection.records.findIndex((r) => Number(idOf(r)) > bound);
        start = index < 0 ? collection.records.length : index;
      }
      break;
    }
    case 'token':
      start = toInt(params.get(paging.tokenParam)?.replace(/^t/, ''), 0);
      break;
    case 'url':
      start = toInt(params.get('start'), 0);
      break;
  }
  return { start: Math.max(0, start), size };
}

function idOf(record: JsonText): unknown {
  const id = entriesOf(record)?.find(([k]) => k === 'id')?.[1];
  return isNumberLiteral(id) ? id.$number : id;
}

function envelope(
  shape: Envelope,
  records: JsonText[],
  more: boolean,
  next: number,
  total: number,
  path: string,
  origin: string,
): JsonText {
  if (shape.dataPath === null) return records;
  const top: [string, JsonText][] = [];
  if (shape.flag && (more || !shape.flag.omitAtEnd)) {
    top.push([
      shape.flag.key,
      shape.flag.style === 'bool' ? more : shape.flag.style === 'int' ? (more ? 1 : 0) : more ? 'true' : 'false',
    ]);
  }
  if (shape.next) {
    const url = nextUrl(shape.next.form, path, next, origin);
    if (more) setAt(top, shape.next.key, url);
    else if (shape.next.atEnd !== 'missing')
      setAt(top, shape.next.key, { null: null, empty: '', false: false }[shape.next.atEnd]);
  }
  if (shape.token) {
    if (more) setAt(top, shape.token.key, `t${next}`);
    else if (shape.token.atEnd !== 'missing') setAt(top, shape.token.key, shape.token.atEnd === 'null' ? null : '');
  }
  if (shape.total) setAt(top, shape.total.key, shape.total.asString ? String(total) : total);
  for (const entry of shape.extra ?? []) if (!top.some(([k]) => k === entry[0])) top.push(entry);
  setAt(top, shape.dataPath, records);
  return ordered(top);
}

function nextUrl(
  form: 'absolute' | 'relative' | 'rooted' | 'query',
  path: string,
  next: number,
  origin: string,
): string {
  const last = path.split('/').pop() ?? '';
  switch (form) {
    case 'absolute':
      return `${origin}${path}?start=${next}`;
    case 'rooted':
      return `${path}?start=${next}`;
    case 'relative':
      return `${last}?start=${next}`;
    case 'query':
      return `?start=${next}`;
  }
}

/** Sets a value at a path of nested ordered objects inside `top` (creating them). */
function setAt(top: [string, JsonText][], path: string[], value: JsonText): void {
  if (path.length === 0) return;
  let entries = top;
  for (const key of path.slice(0, -1)) {
    let child = entries.find(([k]) => k === key)?.[1];
    if (!(child && typeof child === 'object' && '$entries' in child)) {
      child = ordered([]);
      const at = entries.findIndex(([k]) => k === key);
      if (at >= 0) entries[at] = [key, child];
      else entries.push([key, child]);
    }
    entries = (child as { $entries: [string, JsonText][] }).$entries;
  }
  const key = path[path.length - 1];
  const at = entries.findIndex(([k]) => k === key);
  if (at >= 0) entries[at] = [key, value];
  else entries.push([key, value]);
}
