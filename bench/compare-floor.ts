/** Ad-hoc: `node dist/bench/compare-floor.js PAGES [flat|nested] [REPETITIONS]` prints one floor comparison. */
import { compareWithFloor } from './extraction-bench.js';
import type { RecordShape } from './paged-server-process.js';

const [pages = '1000', shape = 'flat', repetitions = '3'] = process.argv.slice(2);
console.log(
  JSON.stringify(await compareWithFloor(Number(pages), 100, shape as RecordShape, Number(repetitions)), null, 2),
);
