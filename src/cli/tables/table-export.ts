import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { link, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';
import { streamCsv, type ExportResult } from '../../store/table-csv.js';
import type { TableSource } from '../../store/table-source.js';
import { keboolaCsv, type TableDetail, type TableQuery } from '../../store/tables/index.js';

export { keboolaCsv };
export type { ExportResult };

/** Keboola's input-mapping manifest of an exported table (`<file>.manifest`). */
export function inputManifest(table: TableDetail, columns: string[]): Record<string, unknown> {
  return {
    id: table.id,
    name: table.name,
    columns,
    primary_key: table.primaryKey,
    rows_count: table.rowsCount,
    created: table.created,
    last_import_date: table.lastImportDate,
    last_change_date: table.lastChangeDate,
  };
}

/** Exports to stdout: the CSV only (a manifest has no place there). */
export function exportToStdout(source: TableSource, tableId: string, query: TableQuery): Promise<ExportResult> {
  return streamCsv(source, tableId, query, process.stdout);
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function closeStream(stream: WriteStream): Promise<void> {
  if (stream.closed) return;
  stream.end();
  await once(stream, 'close');
}

/**
 * Exports to `file` and `<file>.manifest`. Both are written to temporary files beside them first
 * and appear only when complete: a failed export leaves no half file. An existing file is replaced
 * only with `force`; without it the files are linked in place, which fails atomically if one has
 * appeared meanwhile.
 */
export async function exportToFile(
  source: TableSource,
  tableId: string,
  query: TableQuery,
  file: string,
  force: boolean,
): Promise<ExportResult> {
  const target = path.resolve(file);
  const manifest = `${target}.manifest`;
  const folder = path.dirname(target);
  const folderStat = await stat(folder).catch(() => null);
  if (!folderStat?.isDirectory())
    throw new UserError(
      'GEX_FILE_NOT_WRITTEN',
      `Cannot write ${displayText(file)}: the folder ${displayText(folder)} does not exist; create it first or name another --output.`,
    );
  if (!force) {
    for (const f of [target, manifest])
      if (await exists(f))
        throw new UserError(
          'GEX_FILE_NOT_WRITTEN',
          `${displayText(f)} exists already: add --force to replace it, or name another --output.`,
        );
  }
  const stamp = `${process.pid}.${randomBytes(4).toString('hex')}`;
  const tempCsv = path.join(folder, `.${path.basename(target)}.${stamp}.tmp`);
  const tempManifest = path.join(folder, `.${path.basename(target)}.manifest.${stamp}.tmp`);
  const committed: string[] = [];
  let stream: WriteStream | undefined;
  try {
    stream = createWriteStream(tempCsv, { flags: 'wx' });
    const failed = new Promise<never>((_, reject) =>
      stream!.once('error', (e) =>
        reject(new UserError('GEX_FILE_NOT_WRITTEN', `Cannot write ${displayText(file)}: ${e.message}`, { cause: e })),
      ),
    );
    failed.catch(() => undefined);
    const result = await Promise.race([streamCsv(source, tableId, query, stream), failed]);
    await Promise.race([closeStream(stream), failed]);
    await writeFile(tempManifest, `${JSON.stringify(inputManifest(result.table, result.columns), null, 2)}\n`, {
      flag: 'wx',
    });
    for (const [temp, final] of [
      [tempCsv, target],
      [tempManifest, manifest],
    ]) {
      if (force) await rename(temp, final);
      else {
        try {
          await link(temp, final);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST')
            throw new UserError(
              'GEX_FILE_NOT_WRITTEN',
              `${displayText(final)} appeared while the table was exported: add --force to replace it.`,
            );
          throw error;
        }
      }
      committed.push(final);
    }
    return result;
  } catch (error) {
    // a manifest that could not be placed takes its CSV with it: both or neither
    if (!force) for (const f of committed) await unlink(f).catch(() => undefined);
    throw error;
  } finally {
    // the file is opened asynchronously: wait for the stream to close, or a late open re-creates it
    if (stream && !stream.closed)
      await new Promise<void>((resolve) => stream!.destroy().once('close', () => resolve()));
    for (const temp of [tempCsv, tempManifest]) await unlink(temp).catch(() => undefined);
  }
}
