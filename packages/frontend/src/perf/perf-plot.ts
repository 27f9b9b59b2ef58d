import type { LevelResult } from './measurement.js';

const WIDTH = 800;
const HEIGHT = 480;
const MARGIN = { left: 80, right: 140, top: 40, bottom: 60 };
/** Where the legend starts, right of the plotting area: a test reads the plot's pixels left of it. */
export const LEGEND_LEFT = WIDTH - MARGIN.right + 20;
const SERIES = [
  { name: 'p50', color: '#1f77b4', value: (r: LevelResult) => r.percentilesUs.get(50)! },
  { name: 'p90', color: '#2ca02c', value: (r: LevelResult) => r.percentilesUs.get(90)! },
  { name: 'p95', color: '#ff7f0e', value: (r: LevelResult) => r.percentilesUs.get(95)! },
  { name: 'p99', color: '#d62728', value: (r: LevelResult) => r.percentilesUs.get(99)! },
  { name: 'avg', color: '#7f7f7f', value: (r: LevelResult) => r.avgUs },
];

/**
 * A self-contained HTML page (inline SVG, no script, nothing fetched) plotting each
 * latency percentile against throughput over the sweep, one point per level.
 */
export function latencyPlot(results: readonly LevelResult[], title: string): string {
  const points = [...results].sort((a, b) => a.throughput - b.throughput);
  const maxX = Math.max(...points.map((r) => r.throughput), 1);
  const maxY = Math.max(...points.flatMap((r) => SERIES.map((s) => s.value(r))), 1) / 1000;
  const { x, y, svg } = plotAxes(maxX, maxY, title);
  SERIES.forEach((series, i) => {
    const coords = points.map((r) => `${x(r.throughput).toFixed(1)},${y(series.value(r) / 1000).toFixed(1)}`);
    svg.push(`<polyline points="${coords.join(' ')}" fill="none" stroke="${series.color}" stroke-width="2"/>`);
    for (const [index, c] of coords.entries()) {
      const [cx, cy] = c.split(',');
      const r = points[index]!;
      svg.push(`<circle cx="${cx}" cy="${cy}" r="4" fill="${series.color}"><title>${series.name} ${(series.value(r) / 1000).toFixed(3)} ms at ${r.throughput.toFixed(1)} infer/sec (${r.mode} ${r.level})</title></circle>`);
    }
    svg.push(...legendEntry(i, series.name, `stroke="${series.color}" stroke-width="3"`));
  });
  return plotPage(title, svg);
}

/** A plot's frame: the grid, the axes' labels (throughput across, latency in ms up) and the title; `x` and `y` place a point in it, between `left` and `right`. */
export function plotAxes(largestThroughput: number, largestMs: number, title: string): { x: (throughput: number) => number; y: (ms: number) => number; left: number; right: number; svg: string[] } {
  const maxX = niceMax(largestThroughput);
  const maxY = niceMax(largestMs);
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (throughput: number) => MARGIN.left + (throughput / maxX) * plotW;
  const y = (ms: number) => MARGIN.top + plotH - (ms / maxY) * plotH;
  const svg: string[] = [];
  for (let i = 0; i <= 5; i++) {
    const tx = (maxX * i) / 5;
    const ty = (maxY * i) / 5;
    svg.push(
      `<line x1="${x(tx)}" y1="${MARGIN.top}" x2="${x(tx)}" y2="${MARGIN.top + plotH}" stroke="#eee"/>`,
      `<text x="${x(tx)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${label(tx)}</text>`,
      `<line x1="${MARGIN.left}" y1="${y(ty)}" x2="${MARGIN.left + plotW}" y2="${y(ty)}" stroke="#eee"/>`,
      `<text x="${MARGIN.left - 8}" y="${y(ty) + 4}" text-anchor="end">${label(ty)}</text>`,
    );
  }
  svg.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 15}" text-anchor="middle">throughput (infer/sec)</text>`,
    `<text transform="translate(20 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">latency (ms)</text>`,
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-weight="bold">${escape(title)}</text>`,
  );
  return { x, y, left: MARGIN.left, right: MARGIN.left + plotW, svg };
}

/** The legend's `row`th entry, right of the plot: a short line drawn with `stroke` (its SVG attributes), then `name`. */
export function legendEntry(row: number, name: string, stroke: string): string[] {
  const ly = MARGIN.top + 10 + row * 22;
  return [
    `<line x1="${LEGEND_LEFT}" y1="${ly}" x2="${LEGEND_LEFT + 30}" y2="${ly}" ${stroke}/>`,
    `<text x="${WIDTH - MARGIN.right + 58}" y="${ly + 4}">${escape(name)}</text>`,
  ];
}

/** The self-contained page around a plot's SVG elements. */
export function plotPage(title: string, svg: readonly string[]): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head>
<body style="font-family: sans-serif; background: #fff">
<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-size="12" font-family="sans-serif">
${svg.join('\n')}
</svg>
</body></html>
`;
}

/** The next round number above `value` (1, 2 or 5 times a power of ten), for the axes' ends. */
function niceMax(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].map((m) => m * power).find((m) => m >= value) ?? 10 * power);
}

function label(value: number): string {
  return Number(value.toPrecision(3)).toString();
}

export function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
