import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE, isErrorCode, type ErrorCode, type ErrorEntry } from '../../src/common/error-catalogue.js';
import {
  ApplicationError,
  ConfigError,
  errorCode,
  errorLogFields,
  errorReport,
  UserError,
} from '../../src/common/errors.js';
import { answerCode } from '../../src/server/errors/errors.js';
import { StateSaveFailed } from '../../src/store/state-save-failed.js';
import { StoreError } from '../../src/store/store-error.js';
import { repoRoot } from '../support/cli.js';

const CATALOGUE_FILE = path.join('src', 'common', 'error-catalogue.ts');
const DOCS_FILE = path.join(repoRoot, 'docs', 'errors.md');
/** a code as src writes it: a string literal in single quotes */
const CODE_LITERAL = /'(GEX_[A-Z0-9_]+)'/g;
/**
 * Environment variables src names in string literals: they share the prefix but are no error codes.
 * A new variable fails the test below until it is added here.
 */
const ENVIRONMENT_VARIABLES = new Set([
  'GEX_MASTER_KEY',
  'GEX_KEY_FILE',
  'GEX_JOB_PARENT_PID',
  'GEX_MAX_RESPONSE_SIZE',
  'GEX_SQLITE_SYNCHRONOUS',
  'GEX_STORE_TIMEOUT',
  'GEX_PG_POOL_SIZE',
  'GEX_PG_CONNECT_TIMEOUT_MS',
  'GEX_PG_STATEMENT_TIMEOUT_MS',
  'GEX_PG_IDLE_TIMEOUT_MS',
  'GEX_PUBLIC_URL',
  'GEX_SMTP_URL',
  'GEX_SMTP_FROM',
  'GEX_S3_FORCE_PATH_STYLE',
]);

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(repoRoot, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** Every quoted GEX_… literal of src/ outside the catalogue, with the files that hold it. */
function codesUsedInSource(): Map<string, string[]> {
  const used = new Map<string, string[]>();
  for (const file of sourceFiles('src')) {
    if (file === CATALOGUE_FILE) continue;
    for (const [, code] of readFileSync(path.join(repoRoot, file), 'utf8').matchAll(CODE_LITERAL)) {
      if (ENVIRONMENT_VARIABLES.has(code)) continue;
      used.set(code, [...(used.get(code) ?? []), file]);
    }
  }
  return used;
}

/** A catalogue entry as a row of the docs table: code, type, exit code, HTTP status, message. */
function expectedCells(code: ErrorCode): string[] {
  const entry: ErrorEntry = ERROR_CATALOGUE[code];
  return [
    `\`${code}\``,
    entry.type,
    entry.type === 'user' ? '1' : '2',
    entry.status === undefined ? '—' : String(entry.status),
    `\`${entry.message}\``,
  ];
}

/** The rows of the docs' one table of codes: the cells before the last ("what to do"). */
function docsRows(): Array<{ code: string; cells: string[] }> {
  return readFileSync(DOCS_FILE, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `GEX_'))
    .map((line) => {
      const cells = line
        .slice(1, line.endsWith('|') ? -1 : undefined)
        .split(' | ')
        .map((cell) => cell.trim());
      return { code: cells[0].replace(/`/g, ''), cells: cells.slice(0, 5) };
    });
}

describe('error catalogue', () => {
  const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

  it('names every code GEX_ plus capitals, and gives each a message and a kind', () => {
    for (const code of codes) {
      assert.match(code, /^GEX_[A-Z][A-Z0-9_]*$/);
      assert.ok(ERROR_CATALOGUE[code].message.length > 0, code);
      assert.ok(['user', 'application'].includes(ERROR_CATALOGUE[code].type), code);
    }
  });

  it('holds every code thrown in src/, and every code it holds is used there', () => {
    const used = codesUsedInSource();
    const unknown = [...used]
      .filter(([code]) => !isErrorCode(code))
      .map(([code, files]) => `${code} (${files.join(', ')})`);
    assert.deepEqual(
      unknown,
      [],
      'codes in src/ that the catalogue does not list (or environment variables to name in this test)',
    );
    const unused = codes.filter((code) => !used.has(code));
    assert.deepEqual(unused, [], 'catalogue codes that nothing in src/ reports');
  });

  it('is the table of docs/errors.md, row for row, with no stale code', () => {
    const rows = docsRows();
    const documented = rows.map((r) => r.code);
    assert.deepEqual(
      documented.filter((code) => !isErrorCode(code)),
      [],
      'codes in docs/errors.md that the catalogue no longer has',
    );
    assert.deepEqual(documented, codes, 'docs/errors.md lists the catalogue codes in its order');
    for (const { code, cells } of rows) {
      // the expected row, to paste into the docs when the catalogue changes
      assert.deepEqual(
        cells,
        expectedCells(code as ErrorCode),
        `| ${expectedCells(code as ErrorCode).join(' | ')} | … |`,
      );
    }
  });

  describe('the code of what was thrown', () => {
    it('is the error’s own code, in its report and its log fields', () => {
      const error = new ConfigError('parameters.api.baseUrl', 'must be a URL');
      assert.equal(errorCode(error), 'GEX_CONFIG_INVALID');
      assert.deepEqual(errorReport(error), { kind: 'user', code: 'GEX_CONFIG_INVALID', message: error.message });
      assert.deepEqual(errorLogFields(error), { errorKind: 'user', code: 'GEX_CONFIG_INVALID' });
      assert.deepEqual(errorReport(new ApplicationError('GEX_TABLE_FILES_MISSING', 'gone')), {
        kind: 'application',
        code: 'GEX_TABLE_FILES_MISSING',
        message: 'gone',
      });
    });

    it('is GEX_INTERNAL for anything gex did not expect, and for a code that disagrees with the exit code', () => {
      assert.deepEqual(errorReport(new TypeError('x is undefined')), {
        kind: 'application',
        code: 'GEX_INTERNAL',
        message: 'x is undefined',
      });
      assert.equal(errorCode('a thrown string'), 'GEX_INTERNAL');
      assert.equal(errorCode(null), 'GEX_INTERNAL');
      // a user code on something that exits 2 would tell a machine "retrying will not help" wrongly
      assert.equal(errorCode(Object.assign(new Error('odd'), { gexCode: 'GEX_CONFIG_INVALID' })), 'GEX_INTERNAL');
      assert.equal(errorCode(Object.assign(new Error('odd'), { gexCode: 'NOT_A_CODE' })), 'GEX_INTERNAL');
    });

    it('follows a store refusal’s HTTP status unless the refusal names one, and is GEX_INTERNAL for a 500', () => {
      assert.equal(errorCode(StoreError.notFound('Configuration 1 not found')), 'GEX_STORE_NOT_FOUND');
      assert.equal(errorCode(StoreError.accessDenied()), 'GEX_STORE_ACCESS_DENIED');
      assert.equal(errorCode(StoreError.validation('name is missing')), 'GEX_STORE_INVALID_REQUEST');
      assert.equal(
        errorCode(new StoreError(401, 'storage.tokenInvalid', 'Invalid access token')),
        'GEX_STORE_TOKEN_INVALID',
      );
      assert.equal(errorCode(new StoreError(503, 'storage.databaseUnavailable', 'down')), 'GEX_STORE_UNAVAILABLE');
      assert.equal(
        errorCode(new StoreError(404, 'storage.tables.notFound', 'no table', undefined, 'GEX_TABLE_NOT_FOUND')),
        'GEX_TABLE_NOT_FOUND',
      );
      assert.equal(answerCode(new StoreError(500, 'storage.internalError', 'Internal server error')), 'GEX_INTERNAL');
      assert.equal(
        answerCode(new StoreError(501, 'notImplemented', 'Not implemented in gex')),
        'GEX_STORE_NOT_IMPLEMENTED',
      );
    });

    it('is GEX_STATE_SAVE_FAILED for a state save that failed part-way', () => {
      const error = new StateSaveFailed('a', new UserError('GEX_STORE_UNAVAILABLE', 'down'), [], []);
      assert.deepEqual(errorLogFields(error), { errorKind: 'application', code: 'GEX_STATE_SAVE_FAILED' });
    });

    it('has the kind of its catalogue entry for every user and application error class', () => {
      for (const code of codes) {
        const entry = ERROR_CATALOGUE[code];
        const error =
          entry.type === 'user' ? new UserError(code as never, 'm') : new ApplicationError(code as never, 'm');
        assert.equal(errorReport(error).kind, entry.type, code);
        assert.equal(error.exitCode, entry.type === 'user' ? 1 : 2, code);
      }
    });
  });
});
