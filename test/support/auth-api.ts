import { rm } from 'node:fs/promises';
import { DataFolder } from '../../src/extractor/data-folder.js';
import { extract, type ExtractionResult } from '../../src/extractor/extractor.js';
import type { AuthRuntime } from '../../src/extractor/auth/index.js';
import { captureLogger, makeDataDir, readTables } from './extraction.js';

export interface AuthRun {
  result: ExtractionResult;
  files: Map<string, string>;
  logs: string;
  /** the run's masker (the CLI's): what it hides */
  mask(text: string): string;
}

export interface AuthRunOptions {
  authorization?: unknown;
  /** pass the run's masker to extract() as the CLI runner does (default) or not (the extractor masks on its own) */
  passMasker?: boolean;
  authRuntime?: Partial<AuthRuntime>;
}

/** Like runExtraction, with config.json `authorization`, the run's masker and a pinned auth clock. */
export async function runAuthExtraction(parameters: unknown, options: AuthRunOptions = {}): Promise<AuthRun> {
  const dataDir = await makeDataDir({
    parameters,
    ...(options.authorization ? { authorization: options.authorization } : {}),
  });
  const capture = captureLogger('debug');
  try {
    const input = await new DataFolder(dataDir).read();
    capture.masker.addFromConfig(input.parameters);
    capture.masker.addFromConfig(input.authorization);
    const result = await extract(input, {
      dataDir,
      logger: capture.logger,
      now: () => 1700000000,
      masker: options.passMasker === false ? undefined : capture.masker,
      authRuntime: options.authRuntime,
    });
    return { result, files: await readTables(dataDir), logs: capture.text(), mask: (t) => capture.masker.mask(t) };
  } catch (error) {
    (error as Error & { logs?: string }).logs = capture.text();
    throw error;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
