import { escape, legendEntry, plotAxes, plotPage } from '../perf/perf-plot.js';
import { describeCandidate, front, type Row } from './search.js';

/** The colours: rows on the front and its line, the other rows, the chosen row's mark, the budget's line. */
export const ANALYZE_PLOT_COLOURS = { front: '#1f77b4', other: '#7f7f7f', chosen: '#d62728', budget: '#ff7f0e' } as const;

/**
 * A self-contained HTML page (inline SVG, no script, nothing fetched) with each measured row as a
 * point (throughput across, p99 latency up), the front joined by a line, the chosen row ringed and
 * the latency budget, when given, as a dashed line.
 */
export function analyzePlot(rows: readonly Row[], chosen: Row | undefined, budgetMs: number | undefined, title: string): string {
  const colours = ANALYZE_PLOT_COLOURS;
  const ms = (row: Row) => row.p99Us / 1000;
  const { x, y, left, right, svg } = plotAxes(Math.max(...rows.map((r) => r.throughput), 1), Math.max(...rows.map(ms), budgetMs ?? 0, 0.001), title);
  const onFront = front(rows);
  if (budgetMs !== undefined) {
    const by = y(budgetMs).toFixed(1);
    svg.push(`<line class="budget" x1="${left}" y1="${by}" x2="${right}" y2="${by}" stroke="${colours.budget}" stroke-width="2" stroke-dasharray="6 4"><title>latency budget ${budgetMs} ms</title></line>`);
  }
  const frontLine = [...onFront].sort((a, b) => a.throughput - b.throughput).map((r) => `${x(r.throughput).toFixed(1)},${y(ms(r)).toFixed(1)}`);
  svg.push(`<polyline class="front" points="${frontLine.join(' ')}" fill="none" stroke="${colours.front}" stroke-width="2"/>`);
  for (const row of rows) {
    const tip = `#${row.index} ${describeCandidate(row.candidate)} at concurrency ${row.concurrency}: ${row.throughput.toFixed(1)} infer/sec, p99 ${ms(row).toFixed(3)} ms${onFront.has(row) ? ', on the front' : ''}${row === chosen ? ', chosen' : ''}`;
    svg.push(`<circle cx="${x(row.throughput).toFixed(1)}" cy="${y(ms(row)).toFixed(1)}" r="5" fill="${onFront.has(row) ? colours.front : colours.other}"><title>${escape(tip)}</title></circle>`);
  }
  if (chosen) {
    const [cx, cy] = [x(chosen.throughput), y(ms(chosen))];
    svg.push(`<rect class="chosen" x="${(cx - 9).toFixed(1)}" y="${(cy - 9).toFixed(1)}" width="18" height="18" fill="none" stroke="${colours.chosen}" stroke-width="3"><title>chosen: #${chosen.index} at concurrency ${chosen.concurrency}</title></rect>`);
  }
  const legend = [
    ['front', `stroke="${colours.front}" stroke-width="3"`],
    ['other rows', `stroke="${colours.other}" stroke-width="6"`],
    ['chosen', `stroke="${colours.chosen}" stroke-width="3"`],
    ...(budgetMs === undefined ? [] : [['budget', `stroke="${colours.budget}" stroke-width="2" stroke-dasharray="6 4"`]]),
  ];
  legend.forEach(([name, stroke], i) => svg.push(...legendEntry(i, name!, stroke!)));
  return plotPage(title, svg);
}
