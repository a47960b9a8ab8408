/**
 * Line and scatter charts, drawn by uPlot (axes that fit their labels, hover values, drag to zoom
 * and double-click to reset), with the project's number format (format.ts) on the axes, in the
 * hover legend and in the last values beside the title. A chart keeps its uPlot instance: new
 * points go in with update(), and destroy() frees it (its window listeners) when the view goes.
 */
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { h } from "./dom.js";
import { formatNumber, formatTicks } from "./format.js";

export interface SeriesSpec {
  readonly name: string;
  readonly color: string;
  /** Formats a value for the axis, the legend and the last-value label (formatNumber by default). */
  readonly format?: (y: number) => string;
  /** Dashes and gaps in px ([4, 3]): a bound drawn beside its series. */
  readonly dash?: readonly number[];
  /** Line width in px (1.8 by default). */
  readonly width?: number;
}

export interface ChartOptions {
  readonly width?: number;
  readonly height?: number;
  readonly yMin?: number;
  readonly yMax?: number;
  /** The x axis' name and unit ("step", the default: training steps; "month"). */
  readonly xLabel?: string;
  readonly yLabel?: string;
  /** Points only, x a measured value (not a count): Phillips and Okun. */
  readonly scatter?: boolean;
  /** Said after the title ("corr -0.42"). */
  readonly note?: string;
  /** The area between two series filled (an interval's bounds: their indexes in the series given, upper first). */
  readonly band?: { readonly between: readonly [number, number]; readonly fill: string };
}

export interface Point {
  readonly x: number;
  readonly y: number | null;
}

const FONT = "11px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

/** A y axis as wide as its longest label (uPlot's fixed 50 px clipped "0.00000558"). */
function fitLabels(self: uPlot, values: string[] | null, axisIdx: number, cycleNum: number): number {
  const axis = self.axes[axisIdx]!;
  if (cycleNum > 1) return (axis as unknown as { _size: number })._size;
  let size = (axis.ticks?.size ?? 10) + (axis.gap ?? 5) + 4;
  const longest = (values ?? []).reduce((a, v) => (String(v).length > a.length ? String(v) : a), "");
  if (longest) {
    self.ctx.font = FONT;
    size += self.ctx.measureText(longest).width;
  }
  return Math.ceil(size);
}

/** A range with a tenth of its span on either side (a single value: ±1% of it, or ±1). */
function padded(_u: uPlot, lo: number, hi: number): uPlot.Range.MinMax {
  const pad = hi > lo ? (hi - lo) / 10 : Math.abs(lo) / 100 || 1;
  return [lo - pad, hi + pad];
}

export class Chart {
  readonly element: HTMLElement;
  private readonly plot: uPlot;
  private readonly titleBox = h("span.chart-title");
  private readonly lastBox = h("span.chart-last");
  private readonly empty = h("div.chart-empty", "no data yet");
  private readonly formats: ((y: number) => string)[];

  constructor(
    private readonly title: string,
    private readonly series: readonly SeriesSpec[],
    private readonly opts: ChartOptions = {},
  ) {
    this.formats = series.map((s) => s.format ?? ((y: number) => formatNumber(y)));
    const yFormat = series[0]?.format;
    const width = Math.max(240, Math.min(opts.width ?? 360, (typeof window === "undefined" ? 1e9 : window.innerWidth) - 56));
    const xLabel = opts.xLabel ?? "step";
    const axisStyle = { font: FONT, labelFont: FONT, stroke: "#6b7385", grid: { stroke: "#e3e6ec", width: 1 }, ticks: { stroke: "#e3e6ec", width: 1, size: 4 } };
    const options: uPlot.Options = {
      width,
      height: opts.height ?? 170,
      scales: {
        // A scatter's points keep off its edges; a line starts and ends at its first and last step.
        x: { time: false, range: opts.scatter ? padded : (_u: uPlot, lo: number, hi: number): uPlot.Range.MinMax => (lo === hi ? [lo - 1, hi + 1] : [lo, hi]) },
        y: opts.yMin !== undefined || opts.yMax !== undefined ? { range: (_u: uPlot, lo: number, hi: number): uPlot.Range.MinMax => [opts.yMin ?? lo, opts.yMax ?? hi] } : {},
      },
      axes: [
        {
          ...axisStyle,
          label: opts.scatter ? xLabel : undefined,
          size: opts.scatter ? 28 : 24,
          // Steps, months and years are whole numbers: no tick at step 1.5.
          ...(opts.scatter ? { values: (_u: uPlot, ticks: number[]) => (yFormat ? ticks.map(yFormat) : formatTicks(ticks)) } : { incrs: [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000], values: (_u: uPlot, ticks: number[]) => ticks.map((t) => String(t)) }),
        },
        {
          ...axisStyle,
          label: opts.yLabel,
          size: fitLabels,
          values: (_u: uPlot, ticks: number[]) => (yFormat ? ticks.map(yFormat) : formatTicks(ticks)),
        },
      ],
      series: [
        { label: xLabel, value: (_u: uPlot, v: number | null) => (v === null ? "–" : opts.scatter ? (yFormat ?? formatNumber)(v) : String(v)) },
        ...series.map((s, i) => ({
          label: s.name,
          stroke: s.color,
          width: s.width ?? 1.8,
          ...(s.dash ? { dash: [...s.dash] } : {}),
          value: (_u: uPlot, v: number | null) => (v === null ? "–" : this.formats[i]!(v)),
          ...(opts.scatter ? { paths: () => null, points: { show: true, size: 7, fill: s.color, stroke: s.color } } : { points: { show: (u: uPlot) => u.data[0].length <= 1 } }),
        })),
      ],
      ...(opts.band ? { bands: [{ series: [opts.band.between[0] + 1, opts.band.between[1] + 1] as [number, number], fill: opts.band.fill }] } : {}),
      legend: { live: true },
      cursor: { drag: { x: true, y: false, setScale: true } },
    };
    const canvas = h("div.chart-plot");
    this.plot = new uPlot(options, [[], ...series.map(() => [])], canvas);
    this.element = h("figure.chart", { "aria-label": title, role: "img", dataset: { points: "0" } }, h("figcaption.chart-head", this.titleBox, this.lastBox), canvas, this.empty);
    this.titleBox.textContent = opts.note ? `${title} · ${opts.note}` : title;
  }

  /** The series' points (one list per series, in the order given; x shared or not: they are merged and sorted). */
  update(points: readonly (readonly Point[])[], note?: string): void {
    if (note !== undefined) this.titleBox.textContent = note ? `${this.title} · ${note}` : this.title;
    const xs = [...new Set(points.flatMap((p) => p.filter((q) => Number.isFinite(q.x)).map((q) => q.x)))].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    const ys = points.map((p) => {
      const col: (number | null)[] = xs.map(() => null);
      for (const q of p) if (q.y !== null && Number.isFinite(q.y) && at.has(q.x)) col[at.get(q.x)!] = q.y;
      return col;
    });
    // A scatter may have two points at one x: each point its own x (a scatter's x need only be sorted).
    const data: uPlot.AlignedData = this.opts.scatter ? this.scatterData(points) : [xs, ...ys];
    const shown = data.slice(1).reduce((n, col) => n + (col as (number | null)[]).filter((v) => v !== null).length, 0);
    this.element.dataset.points = String(shown);
    this.empty.hidden = shown > 0;
    this.plot.setData(data);
    this.lastBox.replaceChildren(
      ...this.series.map((s, i) => {
        const last = (data[i + 1] as (number | null)[]).findLast((v) => v !== null);
        return this.opts.scatter || last === undefined || last === null ? "" : h("span.chart-legend", { style: `color:${s.color}`, dataset: { series: s.name } }, `${s.name} ${this.formats[i]!(last)}`);
      }),
    );
  }

  private scatterData(points: readonly (readonly Point[])[]): uPlot.AlignedData {
    const all = points.flatMap((p, s) => p.filter((q) => Number.isFinite(q.x) && q.y !== null && Number.isFinite(q.y)).map((q) => ({ ...q, s }))).sort((a, b) => a.x - b.x);
    return [all.map((q) => q.x), ...points.map((_, s) => all.map((q) => (q.s === s ? q.y : null)))];
  }

  destroy(): void {
    this.plot.destroy();
  }
}
