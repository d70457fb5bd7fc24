#!/usr/bin/env node
import { existsSync } from 'node:fs';

// The bundle (npm run build) starts much faster than the tree of compiled modules; the tree is
// what a bare `tsc` leaves, so it still runs without the bundling step.
const bundle = new URL('../dist/bundle/main.js', import.meta.url);
const built = existsSync(bundle);
// before main is loaded: a run's start flags (a restart of this process), the compile cache (main
// included) — src/cli/process/process-start.ts
const { startProcess } = await import(
  built ? '../dist/bundle/process-start.js' : '../dist/src/cli/process/process-start.js'
);
startProcess();
const { main } = await import(built ? bundle.href : '../dist/src/cli/main.js');

main(process.argv).catch((error) => {
  console.error(error instanceof Error ? error.stack : String(error));
  process.exit(2);
});
