/**
 * `npm run build && node dist/bench/serve-overhead.js [rounds] [seconds]`: the cost of the request
 * log and metrics on the `gex serve GET detail` figure of `npm run bench`, measured side by side
 * (see serveOverhead).
 */
import { serveOverhead } from './store-bench.js';

const rounds = Number(process.argv[2] ?? 5);
const seconds = Number(process.argv[3] ?? 3);
const r = await serveOverhead(rounds, seconds);
console.log(`gex serve GET configuration detail, ${r.rounds} alternating rounds of ${r.seconds} s (req/s):`);
console.log(`  with request log + metrics: ${r.operated.join(', ')}  median ${r.medianOperated}`);
console.log(`  bare (no logger, no metrics): ${r.bare.join(', ')}  median ${r.medianBare}`);
console.log(
  `  drop ${(r.drop * 100).toFixed(1)}%; Fastify trivial route ${r.trivial} req/s (operated ratio ${(r.medianOperated / r.trivial).toFixed(2)})`,
);
