import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { isStructuredField } from '../../src/common/log-fields.js';
import { createLogger } from '../../src/common/logger.js';
import { repoRoot } from '../support/cli.js';

const LOG_METHODS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'child']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sources(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The keys of an object literal, and of the literals spread into it (`...(x ? { a } : {})`). */
function literalKeys(node: ts.Node, file: ts.SourceFile, keys: string[]): void {
  if (ts.isObjectLiteralExpression(node)) {
    for (const property of node.properties) {
      if (ts.isSpreadAssignment(property)) literalKeys(property.expression, file, keys);
      else if (property.name) keys.push(property.name.getText(file).replace(/^['"]|['"]$/g, ''));
    }
    return;
  }
  ts.forEachChild(node, (child) => literalKeys(child, file, keys));
}

/**
 * The class of "text logs leak internal fields" (issue 33: `destinationFrom=…`, `dataDir=…`,
 * `scheduleId=…`): the text format prints every field that is not one of gex's structured fields,
 * so every field gex's own code logs must be one of them. Found in the source, not in sample lines.
 */
describe('log fields: what gex logs as fields stays out of text lines', () => {
  it("every field gex's code gives a log call or a child logger is a structured field", () => {
    const unknown: string[] = [];
    let calls = 0;
    for (const file of sources(path.join(repoRoot, 'src'))) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (
          ts.isCallExpression(node) &&
          ts.isPropertyAccessExpression(node.expression) &&
          LOG_METHODS.has(node.expression.name.text) &&
          node.arguments.length > 0 &&
          ts.isObjectLiteralExpression(node.arguments[0]) &&
          // a child logger's bindings, or a line's fields followed by its sentence
          (node.expression.name.text === 'child' || node.arguments.length > 1)
        ) {
          calls++;
          const keys: string[] = [];
          literalKeys(node.arguments[0], source, keys);
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          for (const key of keys)
            if (key !== 'err' && !isStructuredField(key))
              unknown.push(`${path.relative(repoRoot, file)}:${line} ${key}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.ok(calls > 30, `found ${calls} log calls with fields`);
    assert.deepEqual(unknown, [], 'register these in src/common/log-fields.ts (or say them in the sentence)');
  });

  it('a text line is its sentence: the fields of a loaded table, a data folder, a schedule are in JSON only', () => {
    const lines: Record<string, string> = { text: '', json: '' };
    for (const format of ['text', 'json'] as const) {
      const stream = { write: (chunk: string) => ((lines[format] += chunk), true) } as unknown as NodeJS.WritableStream;
      const logger = createLogger({ format, stdout: stream, stderr: stream });
      logger.info({ destinationFrom: 'default bucket', tableId: 'in.c-a.b' }, 'Loaded table in.c-a.b');
      logger.info({ dataDir: '/tmp/x' }, 'Data folder ./data');
      logger.warn({ scheduleId: 3, jobId: 4, tick: '2030-01-01T00:00:00Z' }, 'Schedule 3 fired');
    }
    assert.doesNotMatch(lines.text, /destinationFrom|dataDir|scheduleId|jobId|tick=|tableId/);
    assert.match(lines.json, /"destinationFrom":"default bucket".*\n.*"dataDir":"\/tmp\/x".*\n.*"scheduleId":3/);
  });
});
