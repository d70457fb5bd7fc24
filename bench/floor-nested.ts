/**
 * The floor for nested extraction: the least work that writes the same three tables gex (and
 * Generic Extractor) write for the nested bench records — sequential requests with got,
 * JSON.parse, csv-stringify to one file per table, and each child row linked to its parent by
 * `<table>_<md5 of PHP's serialize() of the record>`, as GE's JSON parser does. Nothing else: no
 * structure analysis, no queue, the header taken from the first record.
 * Usage: node floor-nested.js BASE_URL PAGES OUT_DIR   (writes OUT_DIR/items, items_<child>…)
 */
import crypto from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { got } from 'got';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonRecord = { [key: string]: Json };

const [baseUrl, pagesArg, outDir] = process.argv.slice(2);
const pages = Number(pagesArg);
const ROOT = 'items';
const DIALECT = { quoted: true, quoted_empty: true, record_delimiter: 'unix', eof: true } as const;

/** PHP's serialize() of a json_decode()d value (objects are stdClass; the bench has no integer-like keys). */
function serialize(v: Json): string {
  if (v === null) return 'N;';
  if (typeof v === 'boolean') return v ? 'b:1;' : 'b:0;';
  if (typeof v === 'number') return Number.isInteger(v) ? `i:${v};` : `d:${v};`;
  if (typeof v === 'string') return `s:${Buffer.byteLength(v)}:"${v}";`;
  if (Array.isArray(v)) {
    let out = `a:${v.length}:{`;
    for (let i = 0; i < v.length; i++) out += `i:${i};${serialize(v[i])}`;
    return `${out}}`;
  }
  const keys = Object.keys(v);
  let out = `O:8:"stdClass":${keys.length}:{`;
  for (const k of keys) out += `s:${Buffer.byteLength(k)}:"${k}";${serialize(v[k])}`;
  return `${out}}`;
}

// the one-shot digest where Node has it (≥ 20.12), as gex uses it: cheaper than a Hash object per record
const hashOnce = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
const md5 = (text: string): string =>
  hashOnce ? hashOnce('md5', text, 'hex') : crypto.createHash('md5').update(text).digest('hex');

/**
 * A table's CSV file; its header is the first row's keys. A page's rows are stringified in one
 * call (csv-stringify's fastest use: per-row stream writes cost more than the rest of the floor).
 */
class Table {
  readonly file: WriteStream;
  header: string[] | null = null;
  rows: string[][] = [];
  constructor(name: string) {
    this.file = createWriteStream(path.join(outDir, name));
  }
  add(row: Record<string, string>): void {
    if (!this.header) this.rows.push((this.header = Object.keys(row)));
    const header = this.header;
    this.rows.push(header.map((k) => row[k] ?? ''));
  }
  /** Writes the page's rows; waits while the file stream holds more than its buffer. */
  async flush(): Promise<void> {
    if (this.rows.length === 0) return;
    const ok = this.file.write(stringify(this.rows, DIALECT));
    this.rows = [];
    if (!ok) await once(this.file, 'drain');
  }
}

const tables = new Map<string, Table>();
function table(name: string): Table {
  let t = tables.get(name);
  if (!t) tables.set(name, (t = new Table(name)));
  return t;
}

const cell = (v: Json): string => (v === true ? '1' : v === false || v === null ? '' : String(v));

/** Objects flatten into `parent_child` columns; arrays become child rows; scalars are cells. */
function flatten(
  value: JsonRecord,
  prefix: string,
  row: Record<string, string>,
  children: Array<[string, Json[]]>,
): void {
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (Array.isArray(v)) children.push([key, v]);
    else if (v !== null && typeof v === 'object') flatten(v, `${prefix}${key}_`, row, children);
    else row[prefix + key] = cell(v);
  }
}

function writeRecord(record: JsonRecord): void {
  const row: Record<string, string> = {};
  const children: Array<[string, Json[]]> = [];
  flatten(record, '', row, children);
  const parentId = children.length > 0 ? `${ROOT}_${md5(serialize(record))}` : '';
  for (const [key] of children) row[key] = parentId;
  table(ROOT).add(row);
  for (const [key, items] of children) {
    for (const item of items) {
      const childRow: Record<string, string> = {};
      if (item !== null && typeof item === 'object' && !Array.isArray(item)) flatten(item, '', childRow, []);
      else childRow.data = cell(item);
      childRow.JSON_parentId = parentId;
      table(`${ROOT}_${key}`).add(childRow);
    }
  }
}

for (let page = 1; page <= pages + 1; page++) {
  const body = await got(`${baseUrl}/items?page=${page}&limit=100`).json<{ items: JsonRecord[] }>();
  if (body.items.length === 0) break;
  for (const record of body.items) writeRecord(record);
  for (const t of tables.values()) await t.flush();
}
for (const t of tables.values()) {
  t.file.end();
  await once(t.file, 'finish');
}
