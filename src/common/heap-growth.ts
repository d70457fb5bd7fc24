import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/**
 * An extraction allocates fast and keeps little (~11 MB live). After each full GC V8 lets the old
 * generation grow to up to 4× the live size before the next, so a run ends up holding ~30–38 MB
 * of old space for ~11 MB of data, and its peak RSS depends on how long it ran. A factor of 2
 * (1.5 on V8 12+: RUN_MEMORY) keeps the peak flat for more (cheap: little is live) full GCs. Set from the start of the run:
 * set one second in, as before, the old space had already grown during start-up and the peak
 * stayed ~20 MB higher. V8 reads the flag at every GC, so setting it while running works.
 */
export function limitHeapGrowth(percent = RUN_MEMORY.heapGrowingPercent): void {
  const flag = heapGrowthFlag(process.execArgv, percent);
  if (flag) v8.setFlagsFromString(flag);
}

/**
 * The V8 flag to set, or null when node was started with a growth setting of its own
 * (`node --heap-growing-percent=N …`; NODE_OPTIONS does not admit it), which wins.
 */
export function heapGrowthFlag(execArgv: string[], percent = 100): string | null {
  const given = execArgv.some((flag) => /^--heap[-_]growing[-_]percent\b/.test(flag));
  return given ? null : `--heap-growing-percent=${percent}`;
}

/**
 * The memory settings of `gex run`, per V8 generation (measured with npm run bench, flat 1,000 and
 * 10,000 pages; the target is a peak RSS of at most 95 MB on every supported Node):
 *
 * - V8 11 (Node 20): an 8 MB young generation, old space grown to 2× what is live; 80–85 MB.
 * - V8 12+ (Node 22, 24): left as it comes, the same run peaked at 128–136 MB. Its binary alone
 *   touches ~10 MB more code pages (shared, but counted in RSS); the rest was compiler memory:
 *   Maglev and Turbofan compile on helper threads, and the finished jobs' zones (28 MB at the peak)
 *   stay allocated until the main thread installs their code. Compiling on the main thread
 *   (`--no-concurrent-recompilation`, which V8 reads only as it starts: startFlags) holds 4 MB;
 *   without Turbofan (Maglev still optimizes) its code pages are never touched; a 4 MB young
 *   generation and old space grown to 1.5× what is live give back what the larger runtime costs:
 *   85–87 MB (at most 94 MB), and the run takes 5% (1,000 pages) to 10% (10,000 pages) longer
 *   than with V8's defaults — still faster than on Node 20.
 */
const V8_MAJOR = Number(process.versions.v8.split('.')[0]);
export const RUN_MEMORY =
  V8_MAJOR >= 12
    ? {
        youngGenerationBytes: 4 * 1024 * 1024,
        heapGrowingPercent: 50,
        startFlags: ['--no-concurrent-recompilation', '--no-turbofan'],
      }
    : { youngGenerationBytes: 8 * 1024 * 1024, heapGrowingPercent: 100, startFlags: [] as string[] };

/**
 * RUN_MEMORY's start flags, or none when node was started with a flag of the compilers' own —
 * the user's (command line or NODE_OPTIONS), which wins, or these, once gex restarted with them.
 */
export function missingStartFlags(execArgv: string[], nodeOptions = '', flags = RUN_MEMORY.startFlags): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)];
  const compilerFlag = /^--(no[-_])?(turbofan|maglev|concurrent[-_]recompilation|jitless|opt)(=|$)/;
  return given.some((flag) => compilerFlag.test(flag)) ? [] : flags;
}

/** The young generation gex run lets V8 grow to (both semi-spaces, V8's `new_space`). */
export const YOUNG_GENERATION_BYTES = RUN_MEMORY.youngGenerationBytes;

/**
 * Caps V8's young generation at `maxBytes` for the rest of the process. V8 doubles it (up to
 * 32 MB on 64-bit) whenever enough objects survive scavenges — always, in a run that holds each
 * page while it requests the next — and 32 MB was a quarter of a run's peak RSS. 8 MB scavenges
 * as fast (measured) while 2 MB costs 10–35% more CPU time (bench, issue 16). The size is fixed when
 * the heap is set up (`--max-semi-space-size` works on the command line only), but the growth
 * factor is read at every resize: growth stops once the target is reached and resumes if V8
 * shrank the space below it (an idle spell). Node flags given by the user win.
 */
export function limitYoungGeneration(maxBytes = RUN_MEMORY.youngGenerationBytes): void {
  if (!youngGenerationIsOurs(process.execArgv, process.env.NODE_OPTIONS)) return;
  let frozen = false;
  const adjust = (): void => {
    const size = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
    const freeze = size >= maxBytes;
    if (freeze === frozen) return;
    frozen = freeze;
    v8.setFlagsFromString(`--semi-space-growth-factor=${freeze ? 1 : DEFAULT_GROWTH_FACTOR}`);
  };
  adjust();
  // after every collection (reported shortly after it): growth happens in GCs only, and a doubling
  // needs many scavenges' worth of survivors, so none is missed
  const observer = new PerformanceObserver(adjust);
  observer.observe({ entryTypes: ['gc'] });
  stopObservingOnExit(observer);
}

const DEFAULT_GROWTH_FACTOR = 2;

/** Whether no node flag of the user's sizes the young generation (command line or NODE_OPTIONS). */
export function youngGenerationIsOurs(execArgv: string[], nodeOptions = ''): boolean {
  const flags = [...execArgv, ...nodeOptions.split(/\s+/)];
  return !flags.some((flag) =>
    /^--(max|min)[-_]semi[-_]space[-_]size\b|^--semi[-_]space[-_]growth[-_]factor\b/.test(flag),
  );
}

function stopObservingOnExit(observer: PerformanceObserver): void {
  process.once('beforeExit', () => observer.disconnect());
}
