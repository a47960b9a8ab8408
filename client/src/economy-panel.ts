/**
 * The economy room's plots, month by month: the price level, real GDP and unemployment each
 * month, inflation each year, and the Phillips (unemployment against wage inflation) and Okun
 * (change in unemployment against real GDP growth) scatters of the years so far, with the
 * correlations the world computed. It reads the world perspective's data (what the economy's
 * world shows its spectators after each month: worlds/economy/world.ts, view) and keeps every
 * month it has seen, since the room's own history is bounded.
 */
import { lineChart, scatterChart } from "./chart.js";
import { h } from "./dom.js";

/** The part of a month's view the plots read (the shape of MonthEventData). */
interface MonthView {
  readonly stats: { month: number; priceAfter: number; realGdp: number; employed: number; households: number; rate: number };
  readonly year: { year: number; inflation: number | null; unemployment: number; unemploymentChange: number | null; wageInflation: number | null; realGdpGrowth: number | null } | null;
  readonly phillips: number | null;
  readonly okun: number | null;
}

function monthView(json: string): MonthView | undefined {
  if (!json) return undefined;
  try {
    const v = JSON.parse(json) as MonthView;
    return typeof v?.stats?.month === "number" ? v : undefined;
  } catch {
    return undefined;
  }
}

const pct = (y: number) => `${(100 * y).toFixed(1)}%`;
const corr = (c: number | null) => (c === null ? "n/a" : `corr ${c.toFixed(2)}`);

export class EconomyPanel {
  readonly element = h("div.card.economy-panel#economy");
  private readonly months = new Map<number, MonthView>();
  private episode = -1;
  private shown = "";

  /** Takes the world's steps of `episode` (a new episode starts the plots again) and redraws when a month was added. */
  update(episode: number, steps: readonly { timestep: number; data: string }[]): void {
    if (episode !== this.episode) {
      this.episode = episode;
      this.months.clear();
    }
    for (const s of steps) {
      if (this.months.has(s.timestep)) continue;
      const v = monthView(s.data);
      if (v) this.months.set(s.timestep, v);
    }
    const key = `${episode}:${this.months.size}`;
    if (key !== this.shown) {
      this.shown = key;
      this.draw();
    }
  }

  private draw(): void {
    const months = [...this.months.values()].sort((a, b) => a.stats.month - b.stats.month);
    const years = months.flatMap((m) => (m.year ? [m.year] : []));
    const last = months.findLast((m) => m.year !== null);
    const series = (name: string, color: string, f: (m: MonthView) => number, format?: (y: number) => string) => [{ name, color, points: months.map((m) => ({ x: m.stats.month, y: f(m) })), ...(format ? { format } : {}) }];
    this.element.replaceChildren(
      h("h3", "Economy"),
      h(
        "div.charts",
        lineChart("price level", series("price", "#3558d4", (m) => m.stats.priceAfter), { xLabel: "month" }),
        lineChart("real GDP", series("GDP", "#1f8a4c", (m) => m.stats.realGdp), { xLabel: "month" }),
        lineChart("unemployment (monthly)", series("unemployment", "#c53030", (m) => 1 - m.stats.employed / m.stats.households, pct), { yMin: 0, xLabel: "month" }),
        lineChart("inflation (yearly)", [{ name: "inflation", color: "#b7791f", points: years.flatMap((y) => (y.inflation === null ? [] : [{ x: y.year, y: y.inflation }])), format: pct }], { xLabel: "year" }),
        scatterChart(
          "Phillips curve",
          "unemployment",
          "wage inflation",
          years.flatMap((y) => (y.wageInflation === null ? [] : [{ x: y.unemployment, y: y.wageInflation, label: `year ${y.year}` }])),
          { format: pct, note: corr(last?.phillips ?? null) },
        ),
        scatterChart(
          "Okun's law",
          "change in unemployment",
          "real GDP growth",
          years.flatMap((y) => (y.unemploymentChange === null || y.realGdpGrowth === null ? [] : [{ x: y.unemploymentChange, y: y.realGdpGrowth, label: `year ${y.year}` }])),
          { format: pct, note: corr(last?.okun ?? null) },
        ),
      ),
    );
  }
}
