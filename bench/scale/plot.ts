/**
 * A small SVG line chart: log-scaled series count on x, one or more lines of figures on y.
 * Written here rather than pulled in as a dependency: two charts of a few points each.
 */

export interface Line {
  readonly label: string;
  readonly color: string;
  readonly dashed?: boolean;
  readonly points: readonly (readonly [x: number, y: number])[];
}

export interface Chart {
  readonly title: string;
  readonly yLabel: string;
  readonly yLog: boolean;
  readonly lines: readonly Line[];
}

const WIDTH = 460;
const HEIGHT = 300;
const MARGIN = { left: 64, right: 16, top: 32, bottom: 44 };

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function niceTicks(min: number, max: number, log: boolean): number[] {
  if (log) {
    const ticks: number[] = [];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) ticks.push(10 ** e);
    return ticks;
  }
  const step = 10 ** Math.floor(Math.log10((max - min) / 4 || 1));
  const factor = [1, 2, 5, 10].find((f) => (max - min) / (step * f) <= 6) ?? 10;
  const ticks: number[] = [];
  for (let t = Math.floor(min / (step * factor)) * step * factor; t <= max + 1e-9; t += step * factor) ticks.push(t);
  return ticks;
}

function formatTick(value: number): string {
  if (value >= 1e6) return `${value / 1e6}M`;
  if (value >= 1e3) return `${value / 1e3}k`;
  return String(Number(value.toPrecision(3)));
}

function chartSvg(chart: Chart, offsetX: number): string {
  const points = chart.lines.flatMap((l) => l.points).filter(([x, y]) => x > 0 && Number.isFinite(y) && (!chart.yLog || y > 0));
  if (points.length === 0) return '';
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const xTicks = niceTicks(Math.min(...xs), Math.max(...xs), true);
  const yTicks = niceTicks(chart.yLog ? Math.min(...ys) : 0, Math.max(...ys), chart.yLog);
  const [x0, x1] = [Math.log10(xTicks[0] as number), Math.log10(xTicks.at(-1) as number)];
  const [y0, y1] = chart.yLog ? [Math.log10(yTicks[0] as number), Math.log10(yTicks.at(-1) as number)] : [yTicks[0] as number, yTicks.at(-1) as number];
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = (x: number): number => offsetX + MARGIN.left + ((Math.log10(x) - x0) / (x1 - x0 || 1)) * plotW;
  const sy = (y: number): number => MARGIN.top + plotH - (((chart.yLog ? Math.log10(y) : y) - y0) / (y1 - y0 || 1)) * plotH;
  const out: string[] = [];
  out.push(`<text x="${offsetX + WIDTH / 2}" y="18" text-anchor="middle" font-weight="bold">${escapeXml(chart.title)}</text>`);
  for (const t of xTicks) {
    out.push(`<line x1="${sx(t)}" y1="${MARGIN.top}" x2="${sx(t)}" y2="${MARGIN.top + plotH}" stroke="#ddd"/>`);
    out.push(`<text x="${sx(t)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${formatTick(t)}</text>`);
  }
  for (const t of yTicks) {
    out.push(`<line x1="${offsetX + MARGIN.left}" y1="${sy(t)}" x2="${offsetX + MARGIN.left + plotW}" y2="${sy(t)}" stroke="#ddd"/>`);
    out.push(`<text x="${offsetX + MARGIN.left - 6}" y="${sy(t) + 4}" text-anchor="end">${formatTick(t)}</text>`);
  }
  out.push(`<text x="${offsetX + MARGIN.left + plotW / 2}" y="${HEIGHT - 8}" text-anchor="middle">series (log)</text>`);
  out.push(
    `<text x="${offsetX + 14}" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 ${offsetX + 14} ${MARGIN.top + plotH / 2})">${escapeXml(chart.yLabel)}</text>`,
  );
  chart.lines.forEach((line, i) => {
    const valid = line.points.filter(([x, y]) => x > 0 && Number.isFinite(y) && (!chart.yLog || y > 0));
    if (valid.length > 0) {
      const path = valid.map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
      out.push(`<path d="${path}" fill="none" stroke="${line.color}" stroke-width="2"${line.dashed ? ' stroke-dasharray="5,4"' : ''}/>`);
      for (const [x, y] of valid) out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${line.color}"/>`);
    }
    const ly = MARGIN.top + 6 + i * 15;
    out.push(`<line x1="${offsetX + MARGIN.left + 8}" y1="${ly}" x2="${offsetX + MARGIN.left + 26}" y2="${ly}" stroke="${line.color}" stroke-width="2"${line.dashed ? ' stroke-dasharray="5,4"' : ''}/>`);
    out.push(`<text x="${offsetX + MARGIN.left + 30}" y="${ly + 4}">${escapeXml(line.label)}</text>`);
  });
  return out.join('\n');
}

/** Charts side by side in one SVG document. */
export function renderSvg(charts: readonly Chart[]): string {
  const body = charts.map((chart, i) => chartSvg(chart, i * WIDTH)).join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH * charts.length}" height="${HEIGHT}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="white"/>
${body}
</svg>
`;
}
