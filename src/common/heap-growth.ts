import v8 from 'node:v8';

/**
 * An extraction allocates fast and keeps little (~10 MB live). After each full GC V8 lets the old
 * generation grow to up to 4× the live size before the next, so a long run ends up holding ~38 MB
 * of old space for ~10 MB of data, and its peak RSS depends on how long it ran. A factor of 2
 * keeps the peak flat (10,000 pages ~117 MB, like 1,000) for a few more, short full GCs. V8 reads
 * the flag at every GC, so setting it now works; one given to node by the user wins.
 */
export function limitHeapGrowth(percent = 100): void {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (!flags.some((flag) => flag.includes('heap-growing-percent'))) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
