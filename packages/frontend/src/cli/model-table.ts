import type { ModelIndexEntry } from '@tritium/core';

/** One line of the table: model, version, status. */
type Row<T = string> = readonly [T, T, T];

/** The table Triton logs once its models are loaded: each model version and its state (with the reason when not READY). */
export function modelTable(index: readonly ModelIndexEntry[]): string {
  const header: Row = ['Model', 'Version', 'Status'];
  const rows = index.map((entry): Row => [
    entry.name,
    entry.version === undefined ? '-' : String(entry.version),
    entry.state === 'READY' ? 'READY' : `${entry.state}: ${entry.reason}`,
  ]);
  const width = (column: 0 | 1 | 2) => Math.max(...[header, ...rows].map((row) => row[column].length));
  const widths: Row<number> = [width(0), width(1), width(2)];
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const line = (row: Row) => `| ${row[0].padEnd(widths[0])} | ${row[1].padEnd(widths[1])} | ${row[2].padEnd(widths[2])} |`;
  return [rule, line(header), rule, ...rows.map(line), rule].join('\n');
}
