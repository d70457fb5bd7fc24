#!/usr/bin/env node
import { main } from '../dist/src/cli/main.js';

main(process.argv).catch((error) => {
  console.error(error instanceof Error ? error.stack : String(error));
  process.exit(2);
});
