import assert from 'node:assert/strict';
import { runGexInProcess } from '../support/in-process-gex.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedStore } from '../support/open-store.js';
import { gexBin, startServe } from '../support/cli.js';

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe('gex serve', () => {
  let dir: string;
  let store: string;
  let token: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gex-serve-'));
    store = path.join(dir, 'env-store.sqlite');
    const backend = await openEmbeddedStore(store);
    token = (await backend.createToken({ description: 'serve test' })).token;
    await backend.close();
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('serves the store named by $GEX_STORE, logs its address and stops cleanly on SIGTERM', async () => {
    const { child, url, output } = await startServe(['--host', '127.0.0.1'], {
      GEX_STORE: store,
      GEX_LOG_FORMAT: 'text',
    });
    const exited = exitOf(child);
    try {
      assert.match(output(), new RegExp(`store: ${store.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      const verify = await fetch(`${url}/v2/storage/tokens/verify`, { headers: { 'X-StorageApi-Token': token } });
      assert.equal(verify.status, 200);
      assert.equal(((await verify.json()) as { description: string }).description, 'serve test');
      const created = await fetch(`${url}/v2/storage/branch/default/components/ex-generic-v2/configs`, {
        method: 'POST',
        headers: { 'X-StorageApi-Token': token, 'content-type': 'application/json' },
        body: '{"name":"Served"}',
      });
      assert.equal(created.status, 201);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
    assert.match(output(), /SIGTERM received: stopping/);

    // the store was closed cleanly and kept the configuration
    const backend = await openEmbeddedStore(store);
    try {
      const info = await backend.authenticate(token);
      const configs = await backend.session(info!).listConfigurations('ex-generic-v2');
      assert.deepEqual(
        configs.map((c) => c.name),
        ['Served'],
      );
    } finally {
      await backend.close();
    }
  });

  it('exits 1 with a clear message when the port is taken', async () => {
    const first = await startServe(['--store', store], {});
    const firstExit = exitOf(first.child);
    try {
      const port = new URL(first.url).port;
      const second = spawn(process.execPath, [gexBin, 'serve', '--port', port, '--store', store], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      second.stdout.on('data', (d) => (output += d));
      second.stderr.on('data', (d) => (output += d));
      assert.equal(await exitOf(second), 1);
      assert.match(
        output,
        new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is already in use: choose another one with --port`),
      );
    } finally {
      first.child.kill('SIGINT');
    }
    assert.equal(await firstExit, 0);
  });

  it('refuses a --request-timeout, --max-file-size or --max-upload-memory that is no whole number in range', async () => {
    for (const [option, value, message] of [
      ['--request-timeout', '0', /--request-timeout takes a whole number of seconds from 1 to 86400/],
      ['--request-timeout', '1.5', /--request-timeout takes a whole number of seconds/],
      ['--max-file-size', '-1', /--max-file-size takes a whole number of bytes/],
      [
        '--max-upload-memory',
        '1048576',
        /--max-upload-memory takes a whole number of bytes from 2097152 to 68719476736, got 1048576/,
      ],
      ['--max-upload-memory', 'lots', /--max-upload-memory takes a whole number of bytes/],
    ] as const) {
      const child = spawn(process.execPath, [gexBin, 'serve', '--port', '0', '--store', store, option, value], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      assert.equal(await exitOf(child), 1, output);
      assert.match(output, message);
    }
  });

  it('refuses a --host that is no address of this machine: exit 1 with the option, no stack trace', async () => {
    const r = await runGexInProcess(['serve', '--port', '0', '--store', store, '--host', 'nonsense.invalid'], {});
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /--host nonsense\.invalid is no address of this machine/);
    assert.doesNotMatch(r.output, /Application error| {4}at /);
  });
});
