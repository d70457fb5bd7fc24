// `node --import <this file>`: measures how long the process's event loop is held up (no timer can
// fire, no request can be read) and, at exit, writes to the file named by $GEX_LOOP_DELAY_PROBE the
// longest delay in milliseconds since start or since the last SIGUSR2 (sent once the process is
// warm, so that loading and startup do not count).
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
process.on('SIGUSR2', () => histogram.reset());
process.on('exit', () => {
  histogram.disable();
  writeFileSync(
    process.env.GEX_LOOP_DELAY_PROBE,
    JSON.stringify({ maxDelayMs: histogram.max / 1e6, p99DelayMs: histogram.percentile(99) / 1e6 }),
  );
});
