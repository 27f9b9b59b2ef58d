import type { ModelIndexEntry } from '@tritium/core';

/** The table Triton logs once its models are loaded: each model version and its state (with the reason when not READY). */
export function modelTable(index: readonly ModelIndexEntry[]): string {
  const rows = [
    ['Model', 'Version', 'Status'],
    ...index.map((entry) => [entry.name, entry.version === undefined ? '-' : String(entry.version), entry.state === 'READY' ? 'READY' : `${entry.state}: ${entry.reason}`]),
  ];
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  const rule = `+${widths.map((width) => '-'.repeat(width + 2)).join('+')}+`;
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [rule, line(rows[0]!), rule, ...rows.slice(1).map(line), rule].join('\n');
}
