/**
 * How every list command prints its rows (configs, versions, rows, tokens, components, tables,
 * jobs, schedules, notifications). Piped (stdout is no terminal) each row is its cells joined by the list's
 * separator, without a header: what scripts read (`gex configs list | cut -f1`), kept as it was;
 * `--json` is for programs. On a terminal a header row names the columns, and the cells are
 * aligned under it. Cells are already safe text (displayId, displayText).
 */

/** Columns wider than this are not padded to: one long name does not push every other row aside. */
const MAX_ALIGNED_WIDTH = 40;

export interface ListOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

export function printList(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  options: { out?: ListOutput; separator?: string } = {},
): void {
  const out = options.out ?? process.stdout;
  if (!out.isTTY) {
    const separator = options.separator ?? '\t';
    for (const row of rows) out.write(`${row.join(separator)}\n`);
    return;
  }
  const all = [header, ...rows];
  const widths = header.map((_, i) =>
    Math.min(MAX_ALIGNED_WIDTH, Math.max(...all.map((row) => [...(row[i] ?? '')].length))),
  );
  for (const row of all) {
    const cells = header.map((_, i) => row[i] ?? '');
    // the last cell is not padded: no trailing blanks
    const line = cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat(Math.max(0, widths[i] - [...cell].length))))
      .join('  ');
    out.write(`${line.trimEnd()}\n`);
  }
}
