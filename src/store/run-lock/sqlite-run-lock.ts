import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describeHolder, LockFile } from '../../common/lock-file.js';
import type { ConfigurationLock, ConfigurationLockRequest, RunLockAdapter } from './run-lock-adapter.js';

/**
 * The run locks of a SQLite store: a lock file per configuration in `<database>.run-locks/`,
 * named by a hash of the project, component and configuration (ids are hostile text, and the
 * file name must not depend on what they contain).
 */
export class SqliteRunLocks implements RunLockAdapter {
  private readonly dir: string;

  constructor(
    databaseFile: string,
    private readonly projectId: number,
  ) {
    this.dir = `${path.resolve(databaseFile)}.run-locks`;
  }

  configurationLock({ componentId, configId, running }: ConfigurationLockRequest): ConfigurationLock {
    const key = `${this.projectId}\n${componentId}\n${configId}`;
    const dir = this.dir;
    const file = path.join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.lock`);
    const lock = new LockFile(file, running);
    return {
      hint: `If that run is gone (another host or container), remove ${file}.`,
      async tryAcquire() {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const attempt = lock.tryAcquire();
        return attempt.acquired ? true : describeHolder(attempt.holder);
      },
      async release() {
        lock.release();
      },
    };
  }
}
