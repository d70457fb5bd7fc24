import path from 'node:path';
import type { Logger } from '../../common/logger.js';
import { displayId, displayText } from '../../common/log-text.js';
import { plural } from '../../common/text.js';
import type { RunSummary } from '../../runner/run-summary.js';

/**
 * The end of a `gex run --config-id`: where each row that ran put its tables — one line per row
 * with its folder and table files with their row counts. Row ids and file names are configuration
 * text, shown as one safe token each; JSON log lines carry them as fields.
 */
export function logTableLocations(logger: Logger, summary: RunSummary, dataDir: string): void {
  const done = summary.rows.filter((row) => row.status === 'success');
  if (done.length === 0) return;
  logger.info(`Tables are in ${displayText(path.resolve(dataDir))}:`);
  for (const row of done) {
    const folder = `${row.folder === '.' ? '' : `${row.folder}/`}out/tables`;
    const tables = row.tables.map((t) => ({
      file: path.posix.basename(t.file),
      rows: t.rows,
      ...(t.tableId === undefined ? {} : { tableId: t.tableId }),
    }));
    const list =
      tables.length === 0
        ? 'no tables'
        : tables
            .map(
              (t) =>
                `${displayText(t.file)} (${plural(t.rows, 'row')}${t.tableId === undefined ? '' : ` → ${displayId(t.tableId)}`})`,
            )
            .join(', ');
    const who = row.id === null ? 'configuration' : `row ${displayId(row.id)}`;
    logger.info(
      { ...(row.id === null ? {} : { rowId: row.id }), folder: `${row.folder}`, tables },
      `  ${who} → ${displayText(folder)}: ${list}`,
    );
  }
}
