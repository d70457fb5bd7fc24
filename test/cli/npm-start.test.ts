import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../support/cli.js';

describe("npm start (the README's first command)", () => {
  it('stores the bookshop configuration, runs it by config id and prints its tables and states', async () => {
    const result = await new Promise<{ code: number; output: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'scripts', 'start.js')], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('close', (code) => resolve({ code: code ?? -1, output }));
    });
    assert.equal(result.code, 0, result.output);
    assert.match(
      result.output,
      /== \.gex\/start\/data\/rows\/authors\/out\/tables\/bookshop\.authors\n"id","name","born"\n/,
    );
    assert.match(result.output, /in\.c-bookshop\.books\t5 rows\t9 columns\tlast import /);
    assert.match(result.output, /row books: component\.time = \{"previousStart":\d+\}/);
    assert.match(result.output, /row archive: \{\} \(never run\)/);
  });
});
