/** A paged API in its own process for benchmarks: `node paged-server.js PAGES RECORDS flat|nested`. */
import { startFixtureServer } from '../src/fixture-server/fixture-server.js';
import { flatRecord, pagedApi } from '../src/fixture-server/paged-api.js';

const [pages, records, shape] = process.argv.slice(2);

function nestedRecord(i: number): unknown {
  return { ...flatRecord(i), owner: { id: i % 97, name: `owner ${i % 97}`, address: { city: 'Prague', zip: '11000' } }, tags: ['a', `t${i % 7}`], lines: [{ sku: `s${i}`, qty: i % 5 }, { sku: `x${i}`, qty: 1 }] };
}

const server = await startFixtureServer({
  handler: pagedApi({ pages: Number(pages), recordsPerPage: Number(records), record: shape === 'nested' ? nestedRecord : flatRecord }),
  record: false,
});
process.send?.({ url: server.url });
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
