/**
 * A line chart as inline SVG: one or more series over the same x axis (training steps), with the
 * y range, the last value of each series and a legend. No library: a few paths and labels.
 */
const NS = "http://www.w3.org/2000/svg";

export interface Series {
  readonly name: string;
  readonly color: string;
  readonly points: readonly { x: number; y: number }[];
  /** Formats a value for the axis and the last-value label. */
  readonly format?: (y: number) => string;
}

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** `xLabel` names the x axis' unit ("step", the default: training steps; "month"). */
export function lineChart(title: string, series: readonly Series[], opts: { width?: number; height?: number; yMin?: number; yMax?: number; xLabel?: string } = {}): SVGSVGElement {
  const W = opts.width ?? 360;
  const H = opts.height ?? 170;
  const pad = { l: 46, r: 12, t: 22, b: 24 };
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": title });
  svg.append(el("text", { x: pad.l, y: 14, class: "chart-title" }, title));
  const all = series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.y));
  if (all.length === 0) {
    svg.append(el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "chart-empty" }, "no data yet"));
    return svg;
  }
  const xs = all.map((p) => p.x);
  const ys = all.map((p) => p.y);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs, x0 + 1);
  let y0 = opts.yMin ?? Math.min(...ys);
  let y1 = opts.yMax ?? Math.max(...ys);
  if (y1 - y0 < 1e-9) {
    y0 -= 0.5;
    y1 += 0.5;
  }
  const px = (x: number) => pad.l + ((x - x0) / (x1 - x0)) * (W - pad.l - pad.r);
  const py = (y: number) => H - pad.b - ((y - y0) / (y1 - y0)) * (H - pad.t - pad.b);
  const fmt = series[0]?.format ?? ((y: number) => (Math.abs(y) >= 100 ? y.toFixed(0) : y.toPrecision(3)));
  for (const y of [y0, (y0 + y1) / 2, y1]) {
    svg.append(el("line", { x1: pad.l, x2: W - pad.r, y1: py(y), y2: py(y), class: "chart-grid" }));
    svg.append(el("text", { x: pad.l - 4, y: py(y) + 4, "text-anchor": "end", class: "chart-axis" }, fmt(y)));
  }
  const unit = opts.xLabel ?? "step";
  svg.append(el("text", { x: pad.l, y: H - 6, class: "chart-axis" }, `${unit} ${x0}`));
  svg.append(el("text", { x: W - pad.r, y: H - 6, "text-anchor": "end", class: "chart-axis" }, `${unit} ${x1}`));
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p.y));
    if (pts.length === 0) return;
    const d = pts.map((p, j) => `${j ? "L" : "M"}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join("");
    svg.append(el("path", { d, fill: "none", stroke: s.color, "stroke-width": 1.8, class: "chart-line", "data-series": s.name }));
    const last = pts.at(-1)!;
    if (pts.length === 1) svg.append(el("circle", { cx: px(last.x), cy: py(last.y), r: 2.5, fill: s.color }));
    svg.append(el("text", { x: W - pad.r, y: 14 + 12 * i, "text-anchor": "end", fill: s.color, class: "chart-legend" }, `${s.name} ${(s.format ?? fmt)(last.y)}`));
  });
  return svg;
}

/** A scatter of points (x, y) with both axes labelled and the points' correlation in the title. */
export function scatterChart(title: string, xLabel: string, yLabel: string, points: readonly { x: number; y: number; label?: string }[], opts: { width?: number; height?: number; format?: (v: number) => string; note?: string } = {}): SVGSVGElement {
  const W = opts.width ?? 360;
  const H = opts.height ?? 190;
  const pad = { l: 46, r: 12, t: 22, b: 34 };
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart scatter", role: "img", "aria-label": title });
  svg.append(el("text", { x: pad.l, y: 14, class: "chart-title" }, opts.note ? `${title} · ${opts.note}` : title));
  const pts = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  if (pts.length === 0) {
    svg.append(el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "chart-empty" }, "no data yet"));
    return svg;
  }
  const span = (vs: number[]) => {
    let lo = Math.min(...vs);
    let hi = Math.max(...vs);
    if (hi - lo < 1e-9) {
      lo -= 0.01;
      hi += 0.01;
    }
    return [lo, hi] as const;
  };
  const [x0, x1] = span(pts.map((p) => p.x));
  const [y0, y1] = span(pts.map((p) => p.y));
  const px = (x: number) => pad.l + ((x - x0) / (x1 - x0)) * (W - pad.l - pad.r);
  const py = (y: number) => H - pad.b - ((y - y0) / (y1 - y0)) * (H - pad.t - pad.b);
  const fmt = opts.format ?? ((v: number) => v.toPrecision(3));
  for (const y of [y0, y1]) {
    svg.append(el("line", { x1: pad.l, x2: W - pad.r, y1: py(y), y2: py(y), class: "chart-grid" }));
    svg.append(el("text", { x: pad.l - 4, y: py(y) + 4, "text-anchor": "end", class: "chart-axis" }, fmt(y)));
  }
  svg.append(el("text", { x: pad.l, y: H - 18, class: "chart-axis" }, fmt(x0)));
  svg.append(el("text", { x: W - pad.r, y: H - 18, "text-anchor": "end", class: "chart-axis" }, fmt(x1)));
  svg.append(el("text", { x: (W + pad.l) / 2, y: H - 4, "text-anchor": "middle", class: "chart-axis" }, xLabel));
  svg.append(el("text", { x: 10, y: (H - pad.b + pad.t) / 2, "text-anchor": "middle", class: "chart-axis", transform: `rotate(-90 10 ${(H - pad.b + pad.t) / 2})` }, yLabel));
  for (const p of pts) {
    const dot = el("circle", { cx: px(p.x), cy: py(p.y), r: 3, class: "chart-dot" });
    if (p.label) dot.append(el("title", {}, p.label));
    svg.append(dot);
  }
  return svg;
}
