import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startGex, type GexProcess } from '../support/gex-process.js';
import { gexBin, repoRoot } from '../support/cli.js';
import { readDockerfile } from './dockerfile.js';

/** A free TCP port on the loopback interface. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** `command` as PID 1 of new PID and mount namespaces with their own /proc, as in a container. */
function asPid1(command: string[]): GexProcess {
  return startGex(command.slice(1), {}, { command: ['unshare', '--pid', '--fork', '--mount-proc', command[0]] });
}

/** The host's pid of the namespace's PID 1 (unshare's child). */
function innerPid(pid1: GexProcess): number {
  const unshare = pid1.child.pid!;
  return Number(readFileSync(`/proc/${unshare}/task/${unshare}/children`, 'utf8').trim());
}

/** Stops PID 1 (unshare forwards no signal) and waits for the end. */
async function stop(pid1: GexProcess, signal: NodeJS.Signals): Promise<void> {
  process.kill(innerPid(pid1), signal);
  await pid1.exited;
}

/** The HEALTHCHECK command run inside the namespaces of `pid1` (as `docker` runs it in the container). */
async function healthcheck(pid1: GexProcess, cmd: string[]): Promise<number> {
  const inner = innerPid(pid1);
  const [program, ...args] = cmd;
  const child = spawn(
    'nsenter',
    ['--target', String(inner), '--pid', '--mount', program === 'node' ? process.execPath : program, ...args],
    { stdio: 'ignore' },
  );
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? -1)));
}

describe('container image: the HEALTHCHECK (run as in a container: PID 1 in its own namespaces)', function () {
  this.timeout(60_000);
  let cmd: string[];
  let dir: string;
  before(async () => {
    const runtime = (await readDockerfile(path.join(repoRoot, 'Dockerfile')))[1];
    const check = runtime.instructions.find((i) => i.keyword === 'HEALTHCHECK');
    assert.ok(check, 'the runtime stage has a HEALTHCHECK');
    assert.match(check.args, /--interval=\d+s --timeout=\d+s --start-period=\d+s --retries=\d+ CMD \[/);
    cmd = JSON.parse(check.args.slice(check.args.indexOf('CMD ') + 4)) as string[];
    assert.equal(cmd[0], 'node', 'node, no curl');
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-health-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const portArgs of [(p: number) => ['--port', String(p)], (p: number) => [`--port=${p}`]]) {
    it(`is healthy while gex serve ${portArgs(0)[0].replace(/=0$/, '=N')} answers /health`, async () => {
      const port = await freePort();
      const serve = asPid1([
        process.execPath,
        gexBin,
        '--log-level',
        'debug',
        'serve',
        ...portArgs(port),
        '--store',
        path.join(dir, `s${port}.sqlite`),
      ]);
      try {
        await serve.waitFor(/listening on http/);
        assert.equal(await healthcheck(serve, cmd), 0);
        // it did ask the server (probes are logged at debug)
        await serve.waitFor(/DEBUG request .*route=\/health .*status=200/);
      } finally {
        await stop(serve, 'SIGTERM');
      }
    });
  }

  it('is unhealthy when the server answers 503 (store down) or not at all', async () => {
    for (const answer of ['503', 'none']) {
      const port = await freePort();
      const fake =
        answer === '503'
          ? `require('http').createServer((q,s)=>{s.statusCode=503;s.end()}).listen(${port},'127.0.0.1',()=>console.log('ready'))`
          : `console.log('ready');setInterval(()=>{},1e9)`;
      // a process whose command line is that of gex serve
      const pid1 = asPid1([process.execPath, '-e', fake, '/usr/local/bin/gex', 'serve', '--port', String(port)]);
      try {
        await pid1.waitFor(/ready/);
        assert.equal(await healthcheck(pid1, cmd), 1, answer);
      } finally {
        await stop(pid1, 'SIGKILL');
      }
    }
  });

  it('is healthy for every other command (gex run is a job, not a server), also under docker run --init', async () => {
    for (const line of [
      ['/usr/local/bin/gex', 'run', '--row-id', 'serve'],
      ['/sbin/docker-init', '--', 'gex', '--log-level', 'debug', 'run'],
    ]) {
      const pid1 = asPid1([process.execPath, '-e', `console.log('ready');setInterval(()=>{},1e9)`, ...line]);
      try {
        await pid1.waitFor(/ready/);
        assert.equal(await healthcheck(pid1, cmd), 0, line.join(' '));
      } finally {
        await stop(pid1, 'SIGKILL');
      }
    }
  });

  it('labels the image (OCI) with the version of package.json and keeps data, stores and keys out of the build context', async () => {
    const { version } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const runtime = (await readDockerfile(path.join(repoRoot, 'Dockerfile')))[1];
    assert.ok(
      runtime.instructions.some((i) => i.keyword === 'ARG' && i.args === `VERSION=${version}`),
      'ARG VERSION is package.json version',
    );
    const labels = runtime.instructions
      .filter((i) => i.keyword === 'LABEL')
      .map((i) => i.args)
      .join(' ');
    for (const key of ['title', 'description', 'version', 'licenses'])
      assert.match(labels, new RegExp(`org\\.opencontainers\\.image\\.${key}="[^"]+"`));
    const ignore = (await readFile(path.join(repoRoot, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim());
    for (const pattern of [
      '.git',
      'node_modules',
      'dist',
      'data',
      '**/.gex',
      '**/*.sqlite',
      '**/*.sqlite-*',
      '**/*.sqlite.key',
      '**/*.key',
    ]) {
      assert.ok(ignore.includes(pattern), `.dockerignore lists ${pattern}`);
    }
  });
});
