import { readlinkSync } from 'node:fs';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { localProcessLiveness, parseProcessIdentity, processStartTicks } from '../common/process-liveness.js';
import { isInside } from '../common/safe-path.js';

/**
 * A job's folder: `$TMPDIR/gex-job-<job id>-<worker pid>-<worker start ticks>-<pid namespace>-<random>`,
 * made by the worker (mode 0700, a name nobody can guess) for the job's run: its job file, data
 * folder (config.json, state, extracted tables — a secret's outputs too) and summary. Removed when
 * the job ends; a worker killed meanwhile cannot, so:
 *
 * - the store that ends the lost job removes that job's folder of that worker (the job names its
 *   worker: pid and start ticks) — also when the worker was in another PID namespace, as a
 *   container restarted with the same pid is;
 * - a worker that starts removes the folders of dead workers of its own PID namespace. A pid means
 *   nothing in another namespace (a container, `unshare --pid`), so a folder made there is never
 *   judged by its pid: its worker may well be alive.
 */

const PREFIX = 'gex-job-';
/** a folder name as jobFolder makes it, nothing else (no separator, no dot segment, no link target) */
const NAME = /^gex-job-(\d{1,15})-(\d{1,10})-(\d{1,20})-(\d{1,20})-[A-Za-z0-9]{6}$/;

/** The inode of this process's PID namespace ('0' where /proc cannot tell). */
function pidNamespace(): string {
  try {
    return /^pid:\[(\d{1,20})\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
}

/** This worker's mark in its folders' names: pid, start ticks and PID namespace (0 where /proc cannot tell). */
function makerMark(): string {
  return `${process.pid}-${processStartTicks(process.pid) ?? '0'}-${pidNamespace()}`;
}

/** Makes job `jobId`'s folder in `root` (the temporary folder by default). */
export function makeJobFolder(jobId: number, root = tmpdir()): Promise<string> {
  return mkdtemp(path.join(root, `${PREFIX}${jobId}-${makerMark()}-`));
}

/** Removes a job's folder and everything in it (links inside are removed, never followed). */
export async function removeJobFolder(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** The folders in `root` named as makeJobFolder names them, with what their names say. */
async function jobFolders(
  root: string,
): Promise<Array<{ dir: string; jobId: string; pid: string; ticks: string; namespace: string }>> {
  let entries;
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const match = entry.name.startsWith(PREFIX) && entry.isDirectory() ? NAME.exec(entry.name) : null;
    if (!match) return [];
    const [, jobId, pid, ticks, namespace] = match;
    return [{ dir: path.join(root, entry.name), jobId, pid, ticks, namespace }];
  });
}

/** Removes `dir` if it is a real folder of this user directly in `root`; whether it did. */
async function removeIfOurs(root: string, dir: string): Promise<boolean> {
  if (!isInside(root, dir)) return false;
  try {
    const found = await lstat(dir);
    if (!found.isDirectory() || (process.getuid && found.uid !== process.getuid())) return false;
    await removeJobFolder(dir);
    return true;
  } catch {
    // gone meanwhile, or not ours to remove: looked at again next time
    return false;
  }
}

/**
 * Removes the job folders in `root` whose maker, a worker of this PID namespace, no longer runs;
 * the folders removed. Only entries named as makeJobFolder names them, that are real folders (not
 * links) of this user, directly in `root`; a folder that cannot be removed is left for the next look.
 */
export async function removeOrphanedJobFolders(root = tmpdir()): Promise<string[]> {
  const namespace = pidNamespace();
  const removed: string[] = [];
  for (const folder of await jobFolders(root)) {
    if (folder.namespace !== namespace) continue;
    const ticks = folder.ticks === '0' ? undefined : folder.ticks;
    if (localProcessLiveness(Number(folder.pid), ticks) === 'alive') continue;
    if (await removeIfOurs(root, folder.dir)) removed.push(folder.dir);
  }
  return removed;
}

/**
 * Removes the folders of job `jobId` made by the worker `worker` names (its pid and start ticks,
 * in whatever PID namespace it ran), once the store has ended the job as lost; the folders removed.
 */
export async function removeFoldersOfLostJob(jobId: number, worker: string | null, root = tmpdir()): Promise<string[]> {
  const identity = parseProcessIdentity(worker);
  const ticks = identity?.processStart?.split(':').at(-1);
  if (!identity || !ticks) return [];
  const removed: string[] = [];
  for (const folder of await jobFolders(root)) {
    if (folder.jobId !== String(jobId) || folder.pid !== String(identity.pid) || folder.ticks !== ticks) continue;
    if (await removeIfOurs(root, folder.dir)) removed.push(folder.dir);
  }
  return removed;
}
