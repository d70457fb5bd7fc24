import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../src/common/logger.js';
import { OutputWriter } from '../../src/extractor/output/output-writer.js';
import { STRUCT_VERSION, type JsonParser } from '../../src/extractor/output/json-parser/json-parser.js';
import { StructState } from '../../src/extractor/output/record-parser.js';
import { decodeJson, type JsonObject, type JsonValue } from '../../src/json/index.js';

export interface Batch {
  /** JSON text of the record list (decoded losslessly) */
  rows: string;
  type?: string;
  injected?: string;
}

/** Feeds batches to one bucket's parser and returns the written files (name → content). */
export async function parse(batches: Batch[], options: { struct?: string; bucket?: string | null } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-parser-'));
  try {
    const writer = new OutputWriter(
      dir,
      silentLogger(),
      options.struct ? new StructState(decodeJson(options.struct), STRUCT_VERSION) : undefined,
    );
    const parser: JsonParser = await writer.parserFor(options.bucket === undefined ? 'b' : options.bucket, false);
    for (const b of batches) {
      parser.process(
        decodeJson(b.rows) as JsonValue[],
        b.type ?? 'a',
        (b.injected ? decodeJson(b.injected) : new Map()) as JsonObject,
      );
    }
    const state = parser.state();
    await writer.finish();
    const files = new Map<string, string>();
    for (const name of (await readdir(dir)).sort()) files.set(name, await readFile(path.join(dir, name), 'utf8'));
    return { files, state };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The CSV of one table from a single batch. */
export async function table(rows: string, name = 'b.a'): Promise<string | undefined> {
  return (await parse([{ rows }])).files.get(name);
}
