import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer } from '../support/fixture-server/fixture-server.js';
import { repoRoot } from '../support/cli.js';
import { readDockerfile, type Stage } from './dockerfile.js';

/**
 * No Docker engine runs here, so this replays the Dockerfile on the host: every COPY and RUN of
 * the build stage in a scratch folder, the runtime stage's copies, then the ENTRYPOINT + CMD with
 * the image's ENV — and checks the result runs an extraction. Absolute image paths (/app, /data,
 * /usr/local/bin) are mapped into the scratch folder; the runtime stage's RUN is replayed with
 * that mapping.
 */
function sh(command: string, cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

describe('container image: Dockerfile build and start steps replayed on the host', function () {
  this.timeout(15 * 60 * 1000);
  let scratch: string;
  let stages: Stage[];

  before(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'gex-image-'));
    stages = await readDockerfile(path.join(repoRoot, 'Dockerfile'));
  });
  after(() => rm(scratch, { recursive: true, force: true }));

  it('is a multi-stage build on official Node 24 LTS images with a non-root runtime user and gex as entrypoint', () => {
    assert.equal(stages.length, 2);
    for (const stage of stages) assert.match(stage.image, /^node:24(-[a-z]+)*(-slim)?$/);
    const runtime = stages[1];
    const user = runtime.instructions.filter((i) => i.keyword === 'USER').pop();
    assert.ok(user && user.args !== 'root' && user.args !== '0', 'runs as a non-root user');
    assert.deepEqual(runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT')?.json, ['gex']);
    assert.deepEqual(runtime.instructions.find((i) => i.keyword === 'CMD')?.json, ['run']);
    assert.match(runtime.instructions.find((i) => i.keyword === 'ENV')!.args, /KBC_DATADIR=\/data/);
    assert.ok(
      !runtime.instructions.some((i) => i.keyword === 'RUN' && /npm (ci|install)(?!.*--omit=dev)/.test(i.args)),
      'no dev install in the runtime image',
    );
  });

  it('builds, keeps production dependencies only, and the started image extracts a data folder', async () => {
    const [build, runtime] = stages;
    const buildDir = path.join(scratch, 'build');
    const root = path.join(scratch, 'rootfs');
    const app = path.join(root, 'app');
    const binDir = path.join(root, 'usr', 'local', 'bin');
    const data = path.join(root, 'data');
    await mkdir(buildDir, { recursive: true });
    await mkdir(app, { recursive: true });
    await mkdir(binDir, { recursive: true });
    const mapPaths = (s: string) =>
      s
        .replace(/\/usr\/local\/bin/g, binDir)
        .replace(/(?<![\w/])\/app(?=[/\s]|$)/g, app)
        .replace(/(?<![\w/])\/data(?=[/\s]|$)/g, data);

    for (const step of build.instructions) {
      if (step.keyword === 'COPY') {
        const parts = step.args.split(/\s+/);
        const dest = parts.pop()!;
        for (const src of parts)
          await cp(path.join(repoRoot, src), path.join(buildDir, dest === './' ? path.basename(src) : dest), {
            recursive: true,
          });
      } else if (step.keyword === 'RUN') {
        const r = await sh(step.args, buildDir);
        assert.equal(r.code, 0, `RUN ${step.args} failed:\n${r.output.slice(-3000)}`);
      }
    }
    const env: NodeJS.ProcessEnv = {};
    for (const step of runtime.instructions) {
      if (step.keyword === 'ENV')
        for (const pair of step.args.split(/\s+/))
          env[pair.split('=')[0]] = mapPaths(pair.split('=').slice(1).join('='));
      else if (step.keyword === 'COPY') {
        const m = /^--from=(\S+)\s+(\S+)\s+(\S+)$/.exec(step.args);
        if (m)
          await cp(path.join(buildDir, path.relative('/app', m[2])), path.join(app, path.relative('./', m[3])), {
            recursive: true,
          });
        else {
          const [src, dest] = step.args.split(/\s+/);
          await cp(path.join(repoRoot, src), path.join(app, dest), { recursive: true });
        }
      } else if (step.keyword === 'RUN') {
        // chown to the image's user: that user may not exist on this host
        const command = mapPaths(step.args).replace(/&&\s*chown\s+\S+\s+\S+/g, '');
        const r = await sh(command, app);
        assert.equal(r.code, 0, `RUN ${command} failed:\n${r.output}`);
      }
    }
    const pkg = JSON.parse(await readFile(path.join(app, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    for (const dev of Object.keys(pkg.devDependencies)) {
      await assert.rejects(
        readFile(path.join(app, 'node_modules', dev, 'package.json')),
        `dev dependency ${dev} must not be in the image`,
      );
    }

    const server = await startFixtureServer({
      handler: (r) => (r.url.startsWith('/v1/things') ? { body: { items: [{ id: 1, name: 'a' }] } } : undefined),
    });
    try {
      await writeFile(
        path.join(data, 'config.json'),
        JSON.stringify({
          parameters: {
            api: { baseUrl: `${server.url}/v1/` },
            config: { outputBucket: 'img', jobs: [{ endpoint: 'things', dataField: 'items' }] },
          },
        }),
      );
      const entrypoint = runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT')!.json!;
      const cmd = runtime.instructions.find((i) => i.keyword === 'CMD')!.json!;
      const started = await sh([path.join(binDir, entrypoint[0]), ...entrypoint.slice(1), ...cmd].join(' '), scratch, {
        ...env,
        PATH: `${binDir}:${process.env.PATH}`,
      });
      assert.equal(started.code, 0, started.output);
      assert.equal(await readFile(path.join(data, 'out', 'tables', 'img.things'), 'utf8'), '"id","name"\n"1","a"\n');
    } finally {
      await server.close();
    }
  });
});
