import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { KEBOOLA_ERRORS, type KeboolaError } from '../../src/common/keboola-errors.js';
import { repoRoot } from '../support/cli.js';

const TABLE_FILE = path.join('src', 'common', 'keboola-errors.ts');
/** Literals that look like Keboola codes but are configuration paths (a row's storage mapping). */
const NOT_CODES = new Set(['storage.input.tables', 'storage.output.tables']);
const PREFIXED = /['"`]((?:storage|queue|scheduler|notification|validation)\.[A-Za-z.]+)['"`]/g;

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(repoRoot, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

const entries: Array<[string, KeboolaError]> = Object.entries(KEBOOLA_ERRORS);

describe("Keboola's error codes (src/common/keboola-errors.ts)", () => {
  it('names each code once, with a client or server error status where it has one', () => {
    const codes = entries.map(([, entry]) => entry.code);
    assert.deepEqual(
      codes.filter((code, i) => codes.indexOf(code) !== i),
      [],
    );
    for (const [key, entry] of entries)
      if (entry.status !== undefined)
        assert.ok(entry.status >= 400 && entry.status <= 599, `${key}: status ${entry.status}`);
  });

  it('is the only place src writes them: every other file refers to its entries', () => {
    const codes = new Set(entries.map(([, entry]) => entry.code));
    const literals: string[] = [];
    for (const file of sourceFiles('src')) {
      if (file === TABLE_FILE) continue;
      // code, not comments (a comment may name a code to say what a line answers)
      const text = readFileSync(path.join(repoRoot, file), 'utf8')
        .split('\n')
        .filter((line) => !/^\s*(\/\/|\/?\*)/.test(line))
        .join('\n');
      for (const [, code] of text.matchAll(PREFIXED)) if (!NOT_CODES.has(code)) literals.push(`${file}: ${code}`);
      for (const [, code] of text.matchAll(/['"`]([A-Za-z]+)['"`]/g))
        if (codes.has(code)) literals.push(`${file}: ${code}`);
    }
    assert.deepEqual(literals, []);
  });
});
