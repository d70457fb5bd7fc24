/**
 * Build step: bundles the compiled CLI (dist/src/cli/main.js and everything it imports) into
 * dist/bundle/, which bin/gex.js loads. Node resolves, reads and links ~320 separate module files
 * on every start otherwise — about 40% of a short run's wall time. Lazily imported parts (store,
 * server, runner, rarely used parsers) become chunks loaded on first use, as before.
 */
import { copyFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { GENERATED_VALIDATOR } from '../src/extractor/config/validator-options.js';

const dist = (relative: string) => fileURLToPath(new URL(`../${relative}`, import.meta.url));
const outdir = dist('bundle');

await rm(outdir, { recursive: true, force: true });
await build({
  // the form parser's worker thread is loaded by a URL next to the server code: an entry of its own
  entryPoints: { main: dist('src/cli/main.js'), 'form-parser-worker': dist('src/server/form-parser-worker.js') },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  // native addons, packages that load files next to their own code, and the big lazily used ones
  external: ['better-sqlite3', 'pg', 'fastify', 'locutus', 'ajv'],
  // CommonJS dependencies call require() for Node's built-ins; an ES module has none of its own
  banner: { js: "import { createRequire as __gexCreateRequire } from 'node:module';\nconst require = __gexCreateRequire(import.meta.url);" },
});
// validate.js imports the generated validator by a URL next to itself, which is now the bundle
await copyFile(dist(`src/extractor/config/${GENERATED_VALIDATOR.slice(2)}`), `${outdir}/${GENERATED_VALIDATOR.slice(2)}`);
