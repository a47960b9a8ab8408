/**
 * A line plot as a standalone SVG file, for learning curves that people would rather look at than
 * read: one panel per metric, one coloured line per run, axes with their ranges. No dependency.
 */

export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface Panel {
  readonly title: string;
  readonly x: string;
  readonly series: readonly Series[];
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];
const W = 420;
const H = 260;
const M = { left: 56, right: 16, top: 34, bottom: 40 };

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const num = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : +x.toPrecision(3)).toString();

function panel(p: Panel, dx: number): string {
  const all = p.series.flatMap((s) => s.points);
  if (all.length === 0) return "";
  let [x0, x1] = [Math.min(...all.map((q) => q[0])), Math.max(...all.map((q) => q[0]))];
  let [y0, y1] = [Math.min(...all.map((q) => q[1])), Math.max(...all.map((q) => q[1]))];
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const pad = (y1 - y0) * 0.05;
  [y0, y1] = [y0 - pad, y1 + pad];
  const px = (x: number) => dx + M.left + ((x - x0) / (x1 - x0)) * (W - M.left - M.right);
  const py = (y: number) => M.top + (1 - (y - y0) / (y1 - y0)) * (H - M.top - M.bottom);
  const out = [
    `<text x="${dx + W / 2}" y="18" text-anchor="middle" font-size="13">${esc(p.title)}</text>`,
    `<rect x="${dx + M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${H - M.top - M.bottom}" fill="none" stroke="#999"/>`,
    `<text x="${dx + M.left - 4}" y="${M.top + 4}" text-anchor="end" font-size="10">${num(y1)}</text>`,
    `<text x="${dx + M.left - 4}" y="${H - M.bottom}" text-anchor="end" font-size="10">${num(y0)}</text>`,
    `<text x="${dx + M.left}" y="${H - M.bottom + 14}" text-anchor="middle" font-size="10">${num(x0)}</text>`,
    `<text x="${dx + W - M.right}" y="${H - M.bottom + 14}" text-anchor="middle" font-size="10">${num(x1)}</text>`,
    `<text x="${dx + W / 2}" y="${H - 8}" text-anchor="middle" font-size="11">${esc(p.x)}</text>`,
  ];
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    if (s.points.length > 0) out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.8" points="${s.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ")}"/>`);
    for (const [x, y] of s.points) out.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="2.2" fill="${color}"/>`);
    out.push(`<text x="${dx + M.left + 8}" y="${M.top + 14 + 13 * i}" font-size="11" fill="${color}">${esc(s.name)}</text>`);
  });
  return out.join("\n");
}

/** Panels side by side in one SVG document. */
export function linePlot(panels: readonly Panel[]): string {
  const width = W * panels.length;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H}" viewBox="0 0 ${width} ${H}" font-family="sans-serif">`,
    `<rect width="${width}" height="${H}" fill="white"/>`,
    ...panels.map((p, i) => panel(p, i * W)),
    "</svg>",
    "",
  ].join("\n");
}
