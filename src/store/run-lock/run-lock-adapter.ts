/**
 * The run lock as a capability of a store: each kind of store (SQLite, PostgreSQL, a remote
 * Storage API) has its adapter, as a query builder has a dialect per database, so the runner
 * asks the store for the lock of a configuration instead of reaching into its database itself.
 */

/** A lock on one configuration, held for a run. */
export interface ConfigurationLock {
  /** one attempt: true when taken, else a description of the holder */
  tryAcquire(): Promise<true | string>;
  /** safe to call when not taken, and more than once */
  release(): Promise<void>;
  /** what the user can do besides waiting (e.g. remove a lock file of a vanished host) */
  readonly hint?: string;
}

export interface ConfigurationLockRequest {
  componentId: string;
  configId: string;
  /** the run in words, written where whoever finds the lock taken reads it */
  running: string;
  /** told when a held lock is lost (its database session broke) */
  onLost(error: Error): void;
}

export interface RunLockAdapter {
  /** null: the store offers no configuration lock (a remote Storage API) */
  configurationLock(request: ConfigurationLockRequest): ConfigurationLock | null;
}

/** A remote Storage API offers no lock: nothing stops another run of a configuration elsewhere. */
export const NO_RUN_LOCKS: RunLockAdapter = {
  configurationLock: () => null,
};
