import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OutputWriter } from '../../src/extractor/output/output-writer.js';
import { StructState, type RecordParser } from '../../src/extractor/output/record-parser.js';
import { decodeJson, type JsonObject, type JsonValue } from '../../src/json/index.js';
import { captureLogger } from './extraction.js';

export interface OutputBatch {
  /** JSON text of the record list (decoded losslessly) */
  rows: string;
  type?: string;
  /** JSON text of the injected columns (userData, parent_*) */
  injected?: string;
}

/** One config (iteration) of a run: its bucket and what the output depends on. */
export interface OutputConfig {
  bucket?: string | null;
  /** JSON text of `config.mappings` */
  mappings?: string;
  compatLevel?: number;
  incremental?: boolean;
  batches: OutputBatch[];
}

export interface OutputRun {
  /** out/tables: file name → content */
  files: Map<string, string>;
  /** the tables in the order they were written (GE's result order per bucket) */
  written: string[];
  /** the parser keys GE would merge into the state (undefined: left as they were) */
  state: StructState | undefined;
  logs: string;
}

/**
 * Runs configs through one OutputWriter the way the extractor does (parser per bucket, structure
 * captured after each config) and returns what lands in out/tables.
 */
export async function runOutput(
  configs: OutputConfig[],
  options: {
    struct?: string;
    structVersion?: JsonValue;
    existing?: Record<string, string>;
    afterPage?: (tmpDir: string, parser: RecordParser) => Promise<void>;
    /** false: no draft tables, the queue is always replayed */
    drafts?: boolean;
  } = {},
): Promise<OutputRun> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-output-'));
  const tmpDir = await mkdtemp(path.join(os.tmpdir(), 'gex-output-tmp-'));
  const capture = captureLogger();
  try {
    for (const [name, content] of Object.entries(options.existing ?? {}))
      await writeFile(path.join(dir, name), content);
    const writer = new OutputWriter(
      dir,
      capture.logger,
      options.struct ? new StructState(decodeJson(options.struct), options.structVersion ?? null) : undefined,
      tmpDir,
      {
        drafts: options.drafts,
      },
    );
    for (const config of configs) {
      const parser = await writer.parserFor(config.bucket === undefined ? 'b' : config.bucket, {
        incremental: config.incremental ?? false,
        mappings: config.mappings ? decodeJson(config.mappings) : undefined,
        compatLevel: config.compatLevel ?? 3,
      });
      for (const b of config.batches) {
        parser.process(
          decodeJson(b.rows) as JsonValue[],
          b.type ?? 'a',
          (b.injected ? decodeJson(b.injected) : new Map()) as JsonObject,
        );
        await parser.settle();
        if (options.afterPage) await options.afterPage(tmpDir, parser);
      }
      writer.captureStruct(parser);
    }
    const written = (await writer.finish()).map((t) => t.file);
    const files = new Map<string, string>();
    for (const name of (await readdir(dir)).sort()) files.set(name, await readFile(path.join(dir, name), 'utf8'));
    return { files, written, state: writer.structState(), logs: capture.text() };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(tmpDir, { recursive: true, force: true });
  }
}

/** Shorthand for one config in bucket `b`. */
export function runMapped(
  mappings: string,
  batches: OutputBatch[],
  config: Partial<OutputConfig> = {},
): Promise<OutputRun> {
  return runOutput([{ ...config, mappings, batches }]);
}
