import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/common/logger.js';
import { SecretMasker } from '../../src/common/secret-masker.js';
import { DataFolder } from '../../src/extractor/data-folder.js';
import { extract, type ExtractionResult } from '../../src/extractor/extractor.js';

export interface ExtractionRun {
  result: ExtractionResult;
  /** file name → content of out/tables */
  files: Map<string, string>;
  logs: string;
  dataDir: string;
}

export async function makeDataDir(config: unknown, state?: unknown): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-test-'));
  await mkdir(path.join(dir, 'in'), { recursive: true });
  await writeFile(path.join(dir, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  if (state !== undefined) await writeFile(path.join(dir, 'in', 'state.json'), JSON.stringify(state));
  return dir;
}

export async function readTables(dataDir: string): Promise<Map<string, string>> {
  const dir = path.join(dataDir, 'out', 'tables');
  const files = new Map<string, string>();
  for (const name of (await readdir(dir).catch(() => [])).sort())
    files.set(name, await readFile(path.join(dir, name), 'utf8'));
  return files;
}

/** A logger writing plain text into a string (secrets of the config masked, as in the CLI). */
export function captureLogger(level: 'debug' | 'info' = 'debug') {
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  const masker = new SecretMasker();
  return { logger: createLogger({ level, masker, stdout: sink, stderr: sink }), masker, text: () => text };
}

/** Runs `extract()` on a fresh data folder with `parameters`; the folder is removed afterwards. */
export async function runExtraction(
  parameters: unknown,
  options: { state?: unknown; keep?: boolean } = {},
): Promise<ExtractionRun> {
  const dataDir = await makeDataDir({ parameters }, options.state);
  const capture = captureLogger();
  try {
    const input = await new DataFolder(dataDir).read();
    capture.masker.addFromConfig(input.parameters);
    const result = await extract(input, { dataDir, logger: capture.logger, now: () => 1700000000 });
    return { result, files: await readTables(dataDir), logs: capture.text(), dataDir };
  } finally {
    if (!options.keep) await rm(dataDir, { recursive: true, force: true });
  }
}
