import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Where the console's templates and assets are: next to this module (dist/src/server/console/) or,
 * in the bundle, in its `console/` folder (the build copies both from src/server/console/).
 */
export function consoleDir(): string {
  for (const candidate of ['./', './console/']) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(`${dir}views/layout.eta`)) return dir;
  }
  throw new Error('The console templates are missing from this build: run npm run build');
}

/** A static file the console serves: its bytes and type, read once. */
export interface ConsoleAsset {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' };

/** The console's assets by name: its own, and htmx from its package (nothing is fetched from the internet). */
export function consoleAssets(dir = consoleDir()): Map<string, ConsoleAsset> {
  const require = createRequire(import.meta.url);
  const files: Record<string, string> = {
    'console.css': `${dir}assets/console.css`,
    'console.js': `${dir}assets/console.js`,
    'htmx.min.js': require.resolve('htmx.org/dist/htmx.min.js'),
  };
  const assets = new Map<string, ConsoleAsset>();
  for (const [name, file] of Object.entries(files)) {
    assets.set(name, { body: readFileSync(file), type: TYPES[name.split('.').pop()!] });
  }
  return assets;
}
