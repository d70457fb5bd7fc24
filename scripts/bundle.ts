/**
 * Build step: bundles the compiled CLI (dist/src/cli/main.js and everything it imports) into
 * dist/bundle/, which bin/gex.js loads. Node resolves, reads and links ~320 separate module files
 * on every start otherwise — about 40% of a short run's wall time. Lazily imported parts (store,
 * server, runner, rarely used parsers) become chunks loaded on first use, as before.
 */
import { copyFile, cp, readFile, rm } from 'node:fs/promises';
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
 * string-width (three copies: yargs' own, cliui's and wrap-ansi's) builds an `Intl.Segmenter` and
 * Unicode property regexps (`\\p{RGI_Emoji}` expands to thousands of strings) when it loads: ~30%
 * of gex's own start-up instructions (callgrind), for help text that a run never lays out. The
 * module's body now runs on the first call of `stringWidth`, its only export.
 */
const lazyStringWidth: Plugin = {
  name: 'lazy-string-width',
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const lines = source.split('\n');
      const imports = lines.filter((line) => line.startsWith('import '));
      const body = lines.filter((line) => !line.startsWith('import ')).join('\n');
      const exported = 'export default function stringWidth(';
      const usable = body.split(exported).length === 2 && !/^export /m.test(body.replace(exported, ''));
      if (!usable)
        return { warnings: [{ text: `${args.path} changed shape: drop or adapt the lazy-string-width plugin` }] };
      const contents = [
        ...imports,
        'let __gexStringWidth;',
        'export default function stringWidth(...args) {',
        `  return (__gexStringWidth ??= (() => {\n${body.replace(exported, 'function stringWidth(')}\nreturn stringWidth;\n})())(...args);`,
        '}',
      ].join('\n');
      return { contents, loader: 'js' };
    });
  },
};

/**
 * http2-wrapper finds a class it needs for HTTP/2 proxies by making a TLS socket when it loads,
 * which reads all of Node's root certificates: ~30% of the start-up instructions of gex (and of
 * any got client), paid by every run, most of which send no request over TLS. Found on first use.
 */
const lazyJsStreamSocket: Plugin = {
  name: 'lazy-js-stream-socket',
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]http2-wrapper[\\/]source[\\/]utils[\\/]js-stream-socket\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const eager =
        'const JSStreamSocket = (new tls.TLSSocket(new stream.PassThrough()))._handle._parentWrap.constructor;';
      if (!source.includes(eager))
        return { warnings: [{ text: `${args.path} changed: drop or adapt the lazy-js-stream-socket plugin` }] };
      const lazy = [
        'let real;',
        'const JSStreamSocket = new Proxy(function JSStreamSocket() {}, {',
        '  construct: (_target, args) =>',
        '    Reflect.construct((real ??= new tls.TLSSocket(new stream.PassThrough())._handle._parentWrap.constructor), args),',
        '});',
      ].join('\n');
      return { contents: source.replace(eager, lazy), loader: 'js' };
    });
  },
};

/**
 * yargs renders the whole help text of a command (string widths, wrapping) right after starting
 * its handler, to have it at hand should the handler fail. gex never shows it then: its failure
 * handler rethrows a command's errors, and `--help` renders help on its own path. Not cached, a
 * run starts sooner (with the lazy string-width above: −16% of gex's start-up instructions).
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
  // worker threads (the form parser, SQLite's large writes) are loaded by a URL next to the code
  // that starts them: entries of their own; and what bin/gex.js does before main is loaded (a
  // run's start flags, the compile cache, main included)
  entryPoints: {
    main: dist('src/cli/main.js'),
    'form-parser-worker': dist('src/server/http/form-parser-worker.js'),
    'sqlite-write-worker': dist('src/store/sql/sqlite-write-worker.js'),
    'process-start': dist('src/cli/process/process-start.js'),
  },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // less text for V8 to scan on every start (names kept: stack traces stay readable, and the source
  // map gives the lines with `node --enable-source-maps`)
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  plugins: [lazyListFormat, lazyStringWidth, lazyJsStreamSocket, noHelpCache],
  // native addons, packages that load files next to their own code, and the big lazily used ones
  external: ['better-sqlite3', 'pg', 'fastify', '@fastify/view', '@fastify/cookie', 'eta', 'locutus', 'ajv'],
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
// the console's templates and assets, beside the compiled module (tests) and in the bundle
for (const target of [dist('src/server/console'), `${outdir}/console`]) {
  for (const part of ['views', 'assets']) {
    await cp(fileURLToPath(new URL(`../../src/server/console/${part}`, import.meta.url)), `${target}/${part}`, {
      recursive: true,
    });
  }
}
