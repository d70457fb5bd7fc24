import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined | null = null;

/**
 * gex's version from its package.json, found above this module (src/, dist/src/, the bundle in
 * dist/bundle/, or an installed package); undefined when none is found.
 */
export function gexVersion(): string | undefined {
  if (cached !== null) return cached;
  cached = undefined;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'gex' && pkg.version) {
        cached = pkg.version;
        break;
      }
    } catch {
      // not here: look one level up
    }
    dir = path.dirname(dir);
  }
  return cached;
}
