import type { ConfigStore } from '../store/config-store.js';
import type { RevealRequest } from '../store/secret-reveal.js';
import type { ProjectTokens } from '../store/embedded/tokens.js';
import type { ProjectFiles } from '../store/files/project-files.js';
import type { ProjectTables, StorageJobs } from '../store/tables/index.js';
import type { Component, TokenInfo } from '../store/types.js';

export interface StorageJobScope {
  tables: ProjectTables;
  files: ProjectFiles;
  close(): Promise<void>;
}

/**
 * What the server needs from a store backend: token lookup, a per-token session and the component
 * registry (for the public component detail and the API index). EmbeddedBackend provides it.
 */
export interface ServerBackend {
  authenticate(token: string): Promise<TokenInfo | null>;
  session(token: TokenInfo): ConfigStore;
  /** the Storage tables of the token's project */
  tables(token: TokenInfo): ProjectTables;
  /** the finished Storage jobs of the token's project */
  storageJobs(token: TokenInfo): StorageJobs;
  /** the File Storage of the token's project */
  files(token: TokenInfo): ProjectFiles;
  /**
   * The tables and files of the token's project for a Storage job, on a connection of their own
   * where the store needs one (SQLite) so the job does not hold up other requests; `close` after.
   * Absent: the request's own (`tables`, `files`).
   */
  forStorageJob?(token: TokenInfo): StorageJobScope;
  /** the tokens of the token's project (token management over HTTP) */
  tokens(token: TokenInfo): ProjectTokens;
  /**
   * plaintext of a runner token's ciphers (null: does not decrypt as its project's or the
   * registry's); 403 for any other token. Absent: the server decrypts for no one (501)
   */
  revealSecrets?(token: TokenInfo, request: RevealRequest): Array<string | null>;
  listComponents(): Promise<Component[]>;
  getComponent(id: string): Promise<Component | undefined>;
  /** resolves when the database answers a cheap query (the health check) */
  ping(): Promise<void>;
  /** changes whenever stored data changes; null when unknown (then nothing read is reused) */
  changeMarker(): Promise<string | null>;
}
