import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../common/logger.js';
import { phpJsonEncode, type JsonObject, type JsonValue } from '../../php-compat/index.js';
import { CsvFile } from './csv-file.js';
import { JsonParser } from './json-parser/json-parser.js';
import { Spool } from './spool.js';

export interface WrittenTable {
  /** file name in out/tables, e.g. `mock-server.users` */
  file: string;
  bucket: string | null;
  table: string;
  rows: number;
}

interface BucketOutput {
  bucket: string | null;
  parser: JsonParser;
  incremental: boolean;
}

const STAGING = '.gex-staging';

/**
 * The tables of a run, per output bucket (configs with the same bucket share one parser, as in
 * GE). Nothing appears in `out/tables` until `finish()`: tables are written to a staging folder
 * and moved in place only when all of them are complete, so a failure leaves no partial table.
 */
export class OutputWriter {
  private readonly buckets = new Map<string, BucketOutput>();
  private struct: JsonValue | undefined;

  constructor(
    private readonly outTablesDir: string,
    private readonly logger: Logger,
    initialStruct: JsonValue | undefined,
    private readonly tmpDir?: string,
  ) {
    this.struct = initialStruct;
  }

  /** The parser of a bucket (null = default bucket), created and seeded on first use. */
  async parserFor(bucket: string | null, incremental: boolean): Promise<JsonParser> {
    const key = bucket ?? '';
    let output = this.buckets.get(key);
    if (!output) {
      const parser = new JsonParser(await Spool.create(this.tmpDir));
      // the structure learned so far flows into a new bucket's parser, as in GE
      parser.seed(this.struct);
      output = { bucket, parser, incremental };
      this.buckets.set(key, output);
    }
    output.incremental = incremental; // the last config of a bucket decides
    return output.parser;
  }

  /** Remembers the structure learned by a parser (call after each config/iteration). */
  captureStruct(parser: JsonParser): void {
    this.struct = parser.state();
  }

  /** `json_parser.struct` for out/state.json. */
  structState(): JsonValue | undefined {
    return this.struct;
  }

  async finish(): Promise<WrittenTable[]> {
    const staging = path.join(this.outTablesDir, STAGING);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    const written: WrittenTable[] = [];
    const opened: CsvFile[] = [];
    try {
      for (const { bucket, parser, incremental } of this.buckets.values()) {
        const fileName = (table: string) => (bucket === null ? table : `${bucket}.${table}`);
        const tables = await parser.writeTables(
          (table) => {
            const csv = new CsvFile(path.join(staging, fileName(table)));
            opened.push(csv);
            return csv;
          },
          (message) => this.logger.error(message),
        );
        for (const [table, csv] of tables) {
          await csv.close();
          await writeFile(`${csv.file}.manifest`, manifest(bucket, table, incremental));
          written.push({ file: fileName(table), bucket, table, rows: csv.rows });
        }
      }
      for (const table of written) {
        for (const suffix of ['', '.manifest']) {
          await rename(path.join(staging, table.file + suffix), path.join(this.outTablesDir, table.file + suffix));
        }
      }
      return written;
    } finally {
      for (const csv of opened) csv.destroy();
      await rm(staging, { recursive: true, force: true });
      await this.dispose();
    }
  }

  /** Removes temporary files (spools) without writing anything. */
  async dispose(): Promise<void> {
    for (const { parser } of this.buckets.values()) await parser.dispose();
  }
}

/** `{"destination":"in.c-<bucket>.<table>","incremental":…}`, compact, as GE's json_encode writes it. */
function manifest(bucket: string | null, table: string, incremental: boolean): string {
  const m: JsonObject = new Map();
  if (bucket !== null) m.set('destination', `in.c-${bucket}.${table}`);
  m.set('incremental', incremental);
  return phpJsonEncode(m);
}
