import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `gex-<version>` from gex's package.json (found above this module, in src/ or dist/src/). */
export function gexRevision(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gex' && pkg.version) return `gex-${pkg.version}`;
    } catch {
      // not here: look one level up
    }
    dir = path.dirname(dir);
  }
  return 'gex';
}
