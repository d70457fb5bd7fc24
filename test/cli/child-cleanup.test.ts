import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/cli.js';

/** Whether `pid` still runs (a zombie awaiting its reaper does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('a failed test leaves no process running (root hooks)', function () {
  this.timeout(60_000);

  it('a test timing out with a child running: the child is killed and mocha ends', async () => {
    const mocha = spawn(
      process.execPath,
      [
        path.join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js'),
        '--no-config',
        '--reporter',
        'dot',
        '--require',
        path.join(repoRoot, 'dist', 'test', 'support', 'root-hooks.js'),
        path.join(repoRoot, 'dist', 'test', 'fixtures', 'mocha', 'stray-child.js'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    mocha.stdout.on('data', (d) => (output += d));
    mocha.stderr.on('data', (d) => (output += d));
    // without the hooks the child's pipes would keep mocha waiting: this test would time out
    const code = await new Promise<number | null>((resolve) => mocha.on('close', resolve));
    assert.equal(code, 1, output);
    assert.match(output, /Timeout of 300ms exceeded/);
    assert.match(output, /killed 1 process\(es\) left by the failed test "times out while its child runs"/);
    const pid = Number(/CHILD (\d+)/.exec(output)?.[1]);
    assert.ok(pid > 0, output);
    assert.equal(alive(pid), false, `process ${pid} still runs`);
  });
});
