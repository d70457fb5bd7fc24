#!/usr/bin/env node
import { existsSync } from 'node:fs';

// The bundle (npm run build) starts much faster than the tree of compiled modules; the tree is
// what a bare `tsc` leaves, so it still runs without the bundling step.
const bundle = new URL('../dist/bundle/main.js', import.meta.url);
const { main } = await import(existsSync(bundle) ? bundle.href : '../dist/src/cli/main.js');

main(process.argv).catch((error) => {
  console.error(error instanceof Error ? error.stack : String(error));
  process.exit(2);
});
