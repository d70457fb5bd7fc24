/**
 * Ad-hoc: `node dist/bench/table-load.js ROWS [sqlite|postgres]` prints one table-load comparison
 * (PostgreSQL at GEX_TEST_POSTGRES, default postgres://postgres@127.0.0.1:5432/test).
 */
import { POSTGRES_EXAMPLE, postgresBackendAt, sqliteBackend } from '../test/support/store.js';
import { describeComparison, tableLoadComparison } from './table-load-bench.js';

const [rows = '250000', which = 'sqlite'] = process.argv.slice(2);
const url = process.env.GEX_TEST_POSTGRES || POSTGRES_EXAMPLE;
const backend = which === 'postgres' ? postgresBackendAt(url) : sqliteBackend;
for (const line of describeComparison(await tableLoadComparison(backend, Number(rows), url))) console.log(line);
