// `node --import <this file>`: watches the process's V8 heap and, at exit, writes to the file named
// by $GEX_HEAP_PROBE the largest young generation (V8's new_space) seen after any collection, and
// how many Intl.ListFormat objects were built.
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

let maxNewSpaceBytes = 0;
const sample = () => {
  const size = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
  maxNewSpaceBytes = Math.max(maxNewSpaceBytes, size);
};
new PerformanceObserver(sample).observe({ entryTypes: ['gc'] });

let listFormats = 0;
const ListFormat = Intl.ListFormat;
Intl.ListFormat = new Proxy(ListFormat, {
  construct(target, args) {
    listFormats++;
    return Reflect.construct(target, args);
  },
});

process.on('exit', () => {
  sample();
  writeFileSync(process.env.GEX_HEAP_PROBE, JSON.stringify({ maxNewSpaceBytes, listFormats }));
});
