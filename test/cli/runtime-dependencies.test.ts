import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { repoRoot } from '../support/cli.js';

interface PackageJson {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** Every `.js` file under `dir`. */
async function scripts(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.js')).map((e) => path.join(e.parentPath, e.name));
}

/**
 * The module names a compiled file loads: import and export statements (at the start of a line, as
 * tsc writes them; a statement may span lines), side-effect imports, and dynamic import(),
 * require() and require.resolve() with a literal.
 */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^(?:import|export)\s[^;]*?\sfrom\s*(['"])([^'"\n]+)\1/gm,
    /^import\s*(['"])([^'"\n]+)\1/gm,
    /\bimport\(\s*(['"])([^'"\n]+)\1\s*\)/g,
    /\brequire\(\s*(['"])([^'"\n]+)\1\s*\)/g,
    // a file of a package, found as Node would load it (htmx, served by the console)
    /\brequire\.resolve\(\s*(['"])([^'"\n]+)\1\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) found.push(match[2]);
  return found;
}

/** The package a bare specifier names (`csv-parse/sync` → csv-parse, `@smithy/hash-node/x` → @smithy/hash-node), or null. */
function packageOf(specifier: string): string | null {
  if (
    specifier.startsWith('.') ||
    specifier.startsWith('/') ||
    specifier.startsWith('node:') ||
    builtinModules.includes(specifier.split('/')[0])
  )
    return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  if (!/^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/.test(name))
    throw new Error(`not a package name: ${JSON.stringify(specifier)} (the scan is wrong)`);
  return name;
}

/**
 * An install without dev dependencies (`npm ci --omit=dev`, the Docker image's production stage)
 * runs the compiled modules (bin/gex.js falls back to dist/src when there is no bundle, and the
 * bundle keeps some packages external): every package that product code loads at run time must be
 * a dependency, and every dependency must be used. Type-only imports are gone from the compiled
 * files, so what is scanned is what Node loads.
 */
describe('runtime dependencies of the compiled product code', () => {
  let pkg: PackageJson;
  let used: Map<string, string[]>;
  before(async () => {
    pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as PackageJson;
    used = new Map();
    const dist = path.join(repoRoot, 'dist', 'src');
    for (const file of await scripts(dist)) {
      for (const specifier of specifiers(await readFile(file, 'utf8'))) {
        const name = packageOf(specifier);
        if (name !== null) used.set(name, [...(used.get(name) ?? []), path.relative(dist, file)]);
      }
    }
  });

  it('finds imports of every kind in compiled code', () => {
    assert.deepEqual(
      specifiers(
        `import { a } from 'x';\nimport {\n  b,\n} from 'multi';\nimport 'side';\nexport * from "re";\nconst m = await import('lazy/sub');\nconst r = require('cjs/deep.js');\nsay(\`taken from '\${where}'\`);`,
      ),
      ['x', 'multi', 're', 'side', 'lazy/sub', 'cjs/deep.js'],
    );
    assert.deepEqual(['csv-parse/sync', '@smithy/hash-node', 'node:fs', 'fs/promises', './local.js'].map(packageOf), [
      'csv-parse',
      '@smithy/hash-node',
      null,
      null,
      null,
    ]);
    assert.ok(used.size > 5, 'the scan found the product code imports');
  });

  it('loads no package at run time that is not a dependency (a dev dependency is missing from a production install)', () => {
    const missing = [...used]
      .filter(([name]) => !(name in pkg.dependencies))
      .map(([name, files]) => `${name} (${[...new Set(files)].join(', ')})`);
    assert.deepEqual(
      missing,
      [],
      `imported at run time but not in "dependencies" of package.json: ${missing.join('; ')}`,
    );
  });

  it('has no dependency that product code never loads', () => {
    assert.deepEqual(
      Object.keys(pkg.dependencies).filter((name) => !used.has(name)),
      [],
    );
  });

  it('says in the README why each dependency is there', async () => {
    const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Dependencies and why'));
    const named = new Set(
      table
        .split('\n')
        .filter((line) => line.startsWith('| '))
        .flatMap((line) =>
          line
            .split('|')[1]
            .replace(/\(dev\)/g, '')
            .split(',')
            .map((n) => n.trim()),
        ),
    );
    const all = [
      ...Object.keys(pkg.dependencies),
      ...Object.keys(pkg.devDependencies).filter((n) => !n.startsWith('@types/')),
    ];
    assert.deepEqual(
      all.filter((name) => !named.has(name)),
      [],
    );
  });
});
