/**
 * The economy room's plots, month by month: the price level, real GDP and unemployment each
 * month, inflation each year, and the Phillips (unemployment against wage inflation) and Okun
 * (change in unemployment against real GDP growth) scatters of the years so far, with the
 * correlations the world computed. It reads the world perspective's data (what the economy's
 * world shows its spectators after each month: worlds/economy/world.ts, view) and keeps every
 * month it has seen, since the room's own history is bounded.
 */
import { Chart } from "./chart.js";
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
const MONTH = { xLabel: "month" };
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

  private readonly charts = {
    price: new Chart("price level", [{ name: "price", color: "#3558d4" }], MONTH),
    gdp: new Chart("real GDP", [{ name: "GDP", color: "#1f8a4c" }], MONTH),
    unemployment: new Chart("unemployment (monthly)", [{ name: "unemployment", color: "#c53030", format: pct }], { ...MONTH, yMin: 0 }),
    inflation: new Chart("inflation (yearly)", [{ name: "inflation", color: "#b7791f", format: pct }], { xLabel: "year" }),
    phillips: new Chart("Phillips curve", [{ name: "wage inflation", color: "#3558d4", format: pct }], { scatter: true, xLabel: "unemployment", yLabel: "wage inflation", height: 190 }),
    okun: new Chart("Okun's law", [{ name: "real GDP growth", color: "#3558d4", format: pct }], { scatter: true, xLabel: "change in unemployment", yLabel: "real GDP growth", height: 190 }),
  };

  constructor() {
    this.element.append(h("h3", "Economy"), h("div.charts", Object.values(this.charts).map((c) => c.element)));
  }

  private draw(): void {
    const months = [...this.months.values()].sort((a, b) => a.stats.month - b.stats.month);
    const years = months.flatMap((m) => (m.year ? [m.year] : []));
    const last = months.findLast((m) => m.year !== null);
    const monthly = (f: (m: MonthView) => number) => [months.map((m) => ({ x: m.stats.month, y: f(m) }))];
    const c = this.charts;
    c.price.update(monthly((m) => m.stats.priceAfter));
    c.gdp.update(monthly((m) => m.stats.realGdp));
    c.unemployment.update(monthly((m) => 1 - m.stats.employed / m.stats.households));
    c.inflation.update([years.flatMap((y) => (y.inflation === null ? [] : [{ x: y.year, y: y.inflation }]))]);
    c.phillips.update([years.flatMap((y) => (y.wageInflation === null ? [] : [{ x: y.unemployment, y: y.wageInflation }]))], corr(last?.phillips ?? null));
    c.okun.update([years.flatMap((y) => (y.unemploymentChange === null || y.realGdpGrowth === null ? [] : [{ x: y.unemploymentChange, y: y.realGdpGrowth }]))], corr(last?.okun ?? null));
  }

  /** Frees the charts (the room view is left). */
  dispose(): void {
    for (const chart of Object.values(this.charts)) chart.destroy();
  }
}
