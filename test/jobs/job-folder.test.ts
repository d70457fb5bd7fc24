import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { processStartTicks } from '../../src/common/process-liveness.js';
import { readlinkSync } from 'node:fs';
import { makeJobFolder, removeFoldersOfLostJob, removeOrphanedJobFolders } from '../../src/jobs/job-folder.js';

/** this process's PID namespace, as job folder names carry it */
const NS = /\d+/.exec(readlinkSync('/proc/self/ns/pid'))![0];

/** A process that has ended: its pid and start ticks (a worker killed with -9). */
async function endedProcess(): Promise<{ pid: number; ticks: string }> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  const pid = child.pid!;
  const ticks = processStartTicks(pid) ?? '0';
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return { pid, ticks };
}

describe("job folders: made per job, removed when their worker is gone (a crash's config, state and tables)", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'gex-job-folders-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('removes the folders of workers that no longer run, only those, never through a link', async () => {
    const mine = await makeJobFolder(12, root);
    assert.match(path.basename(mine), new RegExp(`^gex-job-12-${process.pid}-\\d+-${NS}-[A-Za-z0-9]{6}$`));
    const dead = await endedProcess();
    const crashed = path.join(root, `gex-job-7-${dead.pid}-${dead.ticks}-${NS}-AbC123`);
    await mkdir(path.join(crashed, 'data', 'rows'), { recursive: true });
    await writeFile(path.join(crashed, 'data', 'config.json'), '{"#token":"secret"}');
    // a pid reused by a live process: the start ticks tell it from the worker that made the folder
    const reused = path.join(root, `gex-job-8-${process.pid}-1-${NS}-XyZ789`);
    // a folder of another PID namespace (a container, unshare --pid): its pid means nothing here
    const foreign = path.join(root, `gex-job-11-${dead.pid}-${dead.ticks}-1-FoReIg`);
    await mkdir(foreign);
    await mkdir(reused);
    // what the sweep must leave alone: another program's folder, an old-style name, a link to a folder elsewhere
    const outside = await mkdtemp(path.join(os.tmpdir(), 'gex-outside-'));
    await writeFile(path.join(outside, 'keep.txt'), 'kept');
    const link = path.join(root, `gex-job-9-${dead.pid}-${dead.ticks}-${NS}-LiNk00`);
    await symlink(outside, link);
    const inside = path.join(crashed, 'data', 'rows', 'escape');
    await symlink(outside, inside);
    await mkdir(path.join(root, 'gex-job-10-AbCdEf'));
    await mkdir(path.join(root, 'other'));
    try {
      const removed = await removeOrphanedJobFolders(root);
      assert.deepEqual(removed.sort(), [crashed, reused].sort());
      assert.deepEqual(
        (await readdir(root)).sort(),
        [path.basename(mine), path.basename(link), path.basename(foreign), 'gex-job-10-AbCdEf', 'other'].sort(),
      );
      assert.ok(existsSync(path.join(outside, 'keep.txt')), 'nothing followed through a link');
      assert.deepEqual(await removeOrphanedJobFolders(root), [], 'nothing left to remove');
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("removes a lost job's folder by its worker's identity, whatever PID namespace the worker ran in", async () => {
    const worker = JSON.stringify({ host: os.hostname(), pid: 1, processStart: 'boot-id:4242', instance: 'old' });
    const lost = path.join(root, 'gex-job-5-1-4242-77-AbC123');
    const otherJob = path.join(root, 'gex-job-6-1-4242-77-DeF456');
    const otherStart = path.join(root, 'gex-job-5-1-9999-77-GhI789');
    for (const dir of [lost, otherJob, otherStart]) await mkdir(dir);
    assert.deepEqual(await removeFoldersOfLostJob(5, worker, root), [lost]);
    assert.deepEqual((await readdir(root)).sort(), [path.basename(otherJob), path.basename(otherStart)].sort());
    assert.deepEqual(await removeFoldersOfLostJob(5, null, root), [], 'a job that names no worker: nothing');
  });
});
