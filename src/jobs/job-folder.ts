import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { localProcessLiveness, processStartTicks } from '../common/process-liveness.js';
import { isInside } from '../common/safe-path.js';

/**
 * A job's folder: `$TMPDIR/gex-job-<job id>-<worker pid>-<worker start ticks>-<random>`, made
 * by the worker (mode 0700, a name nobody can guess) for the job's run: its job file, data folder
 * (config.json, state, extracted tables — a secret's outputs too) and summary. Removed when the
 * job ends; a worker killed meanwhile cannot, so a worker that starts, or that finds a job whose
 * worker is gone, removes the job folders of workers of this host that no longer run. The name
 * says who made the folder, so a folder is removed only when its maker is gone — never one a live
 * worker (of this store or another one) still uses.
 */

const PREFIX = 'gex-job-';
/** a folder name as jobFolder makes it, nothing else (no separator, no dot segment, no link target) */
const NAME = /^gex-job-(\d{1,15})-(\d{1,10})-(\d{1,20})-[A-Za-z0-9]{6}$/;

/** This worker's mark in its folders' names: pid and start ticks (0 where /proc cannot tell). */
function makerMark(): string {
  return `${process.pid}-${processStartTicks(process.pid) ?? '0'}`;
}

/** Makes job `jobId`'s folder in `root` (the temporary folder by default). */
export function makeJobFolder(jobId: number, root = tmpdir()): Promise<string> {
  return mkdtemp(path.join(root, `${PREFIX}${jobId}-${makerMark()}-`));
}

/** Removes a job's folder and everything in it (links inside are removed, never followed). */
export async function removeJobFolder(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * Removes the job folders in `root` whose maker (a worker of this host) no longer runs; the
 * folders removed. Only entries named as makeJobFolder names them, that are real folders (not
 * links) of this user, directly in `root`; a folder that cannot be removed is left for the next look.
 */
export async function removeOrphanedJobFolders(root = tmpdir()): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.name.startsWith(PREFIX)) continue;
    const match = NAME.exec(entry.name);
    if (!match || !entry.isDirectory()) continue;
    const [, , pid, ticks] = match;
    if (localProcessLiveness(Number(pid), ticks === '0' ? undefined : ticks) === 'alive') continue;
    const dir = path.join(root, entry.name);
    if (!isInside(root, dir)) continue;
    try {
      const found = await lstat(dir);
      if (!found.isDirectory() || (process.getuid && found.uid !== process.getuid())) continue;
      await removeJobFolder(dir);
      removed.push(dir);
    } catch {
      // gone meanwhile, or not ours to remove: looked at again next time
    }
  }
  return removed;
}
