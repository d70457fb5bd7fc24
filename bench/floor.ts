/**
 * The floor for extraction benchmarks: the least work that pulls the same pages into a CSV —
 * sequential requests with got, JSON.parse, csv-stringify to a file, nothing else.
 * Usage: node floor.js BASE_URL PAGES OUT_FILE   (pages are BASE_URL/items?page=N&limit=100)
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { stringify } from 'csv-stringify';
import { got } from 'got';

const [baseUrl, pagesArg, outFile] = process.argv.slice(2);
const pages = Number(pagesArg);
const out = createWriteStream(outFile);
const csv = stringify({ quoted: true, record_delimiter: 'unix' });
csv.pipe(out);
let header: string[] | null = null;
for (let page = 1; page <= pages + 1; page++) {
  const body = await got(`${baseUrl}/items?page=${page}&limit=100`).json<{ items: Array<Record<string, unknown>> }>();
  if (body.items.length === 0) break;
  for (const record of body.items) {
    if (!header) {
      header = Object.keys(record);
      if (!csv.write(header)) await once(csv, 'drain');
    }
    if (!csv.write(header.map((k) => record[k]))) await once(csv, 'drain');
  }
}
csv.end();
await once(out, 'finish');
