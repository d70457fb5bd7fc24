import v8 from 'node:v8';

/**
 * An extraction allocates fast and keeps little (~10 MB live). After each full GC V8 lets the old
 * generation grow to up to 4× the live size before the next, so a long run ends up holding ~38 MB
 * of old space for ~10 MB of data, and its peak RSS depends on how long it ran. A factor of 2
 * keeps the peak flat (~119 MB at 1,000 and at 10,000 pages, instead of ~140 at 10,000) for more
 * full GCs (~10% more CPU time on long runs). V8 reads the flag at every GC, so setting it while
 * running works.
 */
export function limitHeapGrowth(afterMs = 1000): void {
  const flag = heapGrowthFlag(process.execArgv);
  // not during start-up: loading code makes garbage fast, and a short run is done before it matters
  if (flag) setTimeout(() => v8.setFlagsFromString(flag), afterMs).unref();
}

/**
 * The V8 flag to set, or null when node was started with a growth setting of its own
 * (`node --heap-growing-percent=N …`; NODE_OPTIONS does not admit it), which wins.
 */
export function heapGrowthFlag(execArgv: string[], percent = 100): string | null {
  const given = execArgv.some((flag) => /^--heap[-_]growing[-_]percent\b/.test(flag));
  return given ? null : `--heap-growing-percent=${percent}`;
}
