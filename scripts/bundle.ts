/**
 * Build step: bundles the compiled CLI (dist/src/cli/main.js and everything it imports) into
 * dist/bundle/, which bin/gex.js loads. Node resolves, reads and links ~320 separate module files
 * on every start otherwise — about 40% of a short run's wall time. Lazily imported parts (store,
 * server, runner, rarely used parsers) become chunks loaded on first use, as before.
 */
import { copyFile, readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { GENERATED_VALIDATOR } from '../src/extractor/config/validator-options.js';

/**
 * got's type checker (@sindresorhus/is) builds two `Intl.ListFormat`s when it loads, for error
 * messages it may never write. Their ICU locale data costs every process ~6 MB of memory (4.5 MB
 * of the node binary's ICU pages, 1.6 MB of heap); built on first use instead.
 */
const lazyListFormat: Plugin = {
  name: 'lazy-list-format',
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]@sindresorhus[\\/]is[\\/]distribution[\\/]index\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const eager = /new Intl\.ListFormat\(/g;
      const found = source.match(eager)?.length ?? 0;
      const helper =
        'const __gexLazyListFormat = (...options) => { let real; return { format: (list) => (real ??= new Intl.ListFormat(...options)).format(list) }; };\n';
      return {
        contents: found === 0 ? source : helper + source.replace(eager, '__gexLazyListFormat('),
        loader: 'js',
        warnings:
          found === 0
            ? [{ text: 'no Intl.ListFormat left to defer in @sindresorhus/is: drop the lazy-list-format plugin' }]
            : [],
      };
    });
  },
};

/**
 * string-width (three copies: yargs' cliui, wrap-ansi and its own) builds an `Intl.Segmenter` when
 * it loads; the segmenter's locale tables cost every start ~15% of gex's own start-up
 * instructions (callgrind), for help text that most commands never lay out. Built on first use.
 */
const lazySegmenter: Plugin = {
  name: 'lazy-segmenter',
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const eager = 'const segmenter = new Intl.Segmenter();';
      const lazy =
        'let __gexSegmenter; const segmenter = { segment: (text) => (__gexSegmenter ??= new Intl.Segmenter()).segment(text) };';
      const found = source.includes(eager);
      return {
        contents: source.replace(eager, lazy),
        loader: 'js',
        warnings: found
          ? []
          : [{ text: `no eager Intl.Segmenter left in ${args.path}: drop the lazy-segmenter plugin` }],
      };
    });
  },
};

/**
 * yargs renders the whole help text of a command (string widths, wrapping) right after starting
 * its handler, to have it at hand should the handler fail. gex never shows it then: its failure
 * handler rethrows a command's errors, and `--help` renders help on its own path. Not cached, a
 * run starts ~10% sooner (callgrind, with the segmenter above).
 */
const noHelpCache: Plugin = {
  name: 'no-help-cache',
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]yargs[\\/]build[\\/]lib[\\/]usage\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const eager = /self\.cacheHelpMessage = function \(\) \{\s*cachedHelpMessage = this\.help\(\);\s*\};/;
      const found = eager.test(source);
      return {
        contents: source.replace(eager, 'self.cacheHelpMessage = function () {};'),
        loader: 'js',
        warnings: found ? [] : [{ text: 'yargs caches help differently now: drop the no-help-cache plugin' }],
      };
    });
  },
};

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
  plugins: [lazyListFormat, lazySegmenter, noHelpCache],
  // native addons, packages that load files next to their own code, and the big lazily used ones
  external: ['better-sqlite3', 'pg', 'fastify', 'locutus', 'ajv'],
  // CommonJS dependencies call require() for Node's built-ins; an ES module has none of its own
  banner: {
    js: "import { createRequire as __gexCreateRequire } from 'node:module';\nconst require = __gexCreateRequire(import.meta.url);",
  },
});
// validate.js imports the generated validator by a URL next to itself, which is now the bundle
await copyFile(
  dist(`src/extractor/config/${GENERATED_VALIDATOR.slice(2)}`),
  `${outdir}/${GENERATED_VALIDATOR.slice(2)}`,
);
