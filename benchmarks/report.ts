/**
 * The benchmark report: accuracy overall, by question type and by split, the benchmark's own
 * metrics, and the official labels that disagree with the world model, grouped by cause.
 * Written as JSON (the machine-readable record), a terminal table and Markdown.
 */
import type { Benchmark, BenchItem, Graded, Mode, Verdict } from "../worlds/question/benchmark.js";
import type { ItemResult } from "./runner.js";
import type { TurnFailure } from "../worlds/core/episode.js";
import { writtenContextStat, type WrittenContextStat } from "./written-fidelity.js";

export interface Stat {
  readonly total: number;
  readonly correct: number;
  /** 0 to 1: the share of correct answers, or a graded benchmark's mean score. */
  readonly accuracy: number;
}

export interface Disagreement {
  readonly id: string;
  readonly file: string;
  readonly line?: number;
  readonly field?: string;
  readonly type: string;
  readonly question: string;
  readonly official: string | readonly string[];
  readonly worldModel: string | readonly string[] | null;
  /** The benchmark's note on this item ("generated: green_box"). */
  readonly note?: string;
}

export interface BenchReport {
  readonly benchmark: string;
  readonly title: string;
  readonly agent: string;
  readonly mode: Mode;
  readonly data: string;
  readonly runId: string | null;
  /** A graded benchmark's words for `correct` and the mean score (`accuracy`). */
  readonly graded?: Graded;
  readonly total: number;
  readonly correct: number;
  readonly accuracy: number;
  readonly byType: Readonly<Record<string, Stat>>;
  /** split name -> value -> stat ("deception" -> "true" -> ...). */
  readonly splits: Readonly<Record<string, Readonly<Record<string, Stat>>>>;
  /** split name -> value -> type -> stat. */
  readonly byTypeAndSplit: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, Stat>>>>>>;
  readonly metrics?: Readonly<Record<string, number>>;
  /** How the agent does against the world model's labels instead of the official ones. */
  readonly worldModel: {
    readonly agreeWithOfficial: number;
    readonly total: number;
    readonly agentAccuracy: number;
    /** The agent against the world model's labels, by question type (the same order as byType). */
    readonly agentAccuracyByType: Readonly<Record<string, number>>;
  };
  /** Where the agent wrote the story's context itself (`context=self`): how faithful it was to the world model's. */
  readonly writtenContext?: WrittenContextStat;
  readonly disagreements: {
    readonly total: number;
    readonly byCause: Readonly<Record<string, { readonly description: string; readonly count: number; readonly items: readonly Disagreement[] }>>;
  };
  readonly errors: { readonly count: number; readonly examples: readonly { id: string; error: string; failure?: TurnFailure }[] };
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
}

function statOf(results: readonly ItemResult[], graded: boolean): Stat {
  let correct = 0;
  let score = 0;
  for (const r of results) {
    if (r.correct) correct++;
    score += r.score ?? 0;
  }
  const n = results.length;
  return { total: n, correct, accuracy: n ? (graded ? score : correct) / n : 0 };
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string | undefined): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    if (k === undefined) continue;
    let g = m.get(k);
    if (!g) m.set(k, (g = []));
    g.push(x);
  }
  return m;
}

export function sameAnswer(a: string | readonly string[] | null, b: string | readonly string[]): boolean {
  if (a === null) return false;
  if (typeof a === "string" || typeof b === "string") return JSON.stringify(a) === JSON.stringify(b);
  return a.length === b.length && [...a].sort().join("\u0000") === [...b].sort().join("\u0000");
}

export function buildReport<I extends BenchItem>(args: {
  benchmark: Benchmark<I>;
  items: readonly I[];
  results: readonly ItemResult[];
  agent: string;
  mode: Mode;
  data: string;
  runId: string | null;
  startedAt: Date;
  finishedAt: Date;
}): BenchReport {
  const { benchmark, results } = args;
  const graded = benchmark.graded !== undefined;
  const stat = (rs: readonly ItemResult[]) => statOf(rs, graded);
  const byTypeGroups = groupBy(results, (r) => r.type);
  const order = [...benchmark.types, ...[...byTypeGroups.keys()].filter((t) => !benchmark.types.includes(t))];
  const byType: Record<string, Stat> = {};
  for (const t of order) {
    const g = byTypeGroups.get(t);
    if (g) byType[t] = stat(g);
  }
  const splitNames = [...new Set(results.flatMap((r) => Object.keys(r.splits ?? {})))];
  const splits: Record<string, Record<string, Stat>> = {};
  const byTypeAndSplit: Record<string, Record<string, Record<string, Stat>>> = {};
  for (const name of splitNames) {
    splits[name] = {};
    byTypeAndSplit[name] = {};
    const groups = groupBy(results, (r) => r.splits?.[name]);
    for (const value of [...groups.keys()].sort()) {
      const g = groups.get(value)!;
      splits[name]![value] = stat(g);
      const inner: Record<string, Stat> = {};
      const typeGroups = groupBy(g, (r) => r.type);
      for (const t of order) if (typeGroups.has(t)) inner[t] = stat(typeGroups.get(t)!);
      byTypeAndSplit[name]![value] = inner;
    }
  }
  const byCause: Record<string, { description: string; count: number; items: Disagreement[] }> = {};
  for (const r of results) {
    if (r.agrees) continue;
    const cause = r.cause ?? "other";
    const entry = (byCause[cause] ??= { description: benchmark.causes[cause] ?? cause, count: 0, items: [] });
    entry.count++;
    entry.items.push({
      id: r.id,
      file: r.file,
      ...(r.line !== undefined ? { line: r.line } : {}),
      ...(r.field !== undefined ? { field: r.field } : {}),
      type: r.type,
      question: r.question,
      official: r.official,
      worldModel: r.worldModel,
      ...(r.note !== undefined ? { note: r.note } : {}),
    });
  }
  const disagreementTotal = Object.values(byCause).reduce((n, c) => n + c.count, 0);
  let agentVsWorld = 0;
  const vsWorldByType: Record<string, number> = {};
  for (const t of Object.keys(byType)) vsWorldByType[t] = 0;
  for (const r of results) {
    if (r.worldModel === null) continue;
    const v = againstWorld(benchmark, args.items, r);
    agentVsWorld += v;
    if (r.type !== undefined) vsWorldByType[r.type] = (vsWorldByType[r.type] ?? 0) + v;
  }
  const agentAccuracyByType = Object.fromEntries(Object.entries(vsWorldByType).map(([t, v]) => [t, v / byType[t]!.total]));
  const errors = results.filter((r) => r.error);
  const overall = stat(results);
  const written = writtenContextStat(results, Object.keys(byType));
  const metrics = benchmark.metrics?.(
    args.items,
    results.map((r): Verdict => ({ correct: r.correct, ...(r.score !== undefined ? { score: r.score } : {}), ...(r.detail ? { detail: r.detail } : {}) })),
  );
  return {
    benchmark: benchmark.name,
    title: benchmark.title,
    agent: args.agent,
    mode: args.mode,
    data: args.data,
    runId: args.runId,
    ...(benchmark.graded ? { graded: benchmark.graded } : {}),
    total: overall.total,
    correct: overall.correct,
    accuracy: overall.accuracy,
    byType,
    splits,
    byTypeAndSplit,
    ...(metrics ? { metrics } : {}),
    worldModel: {
      agreeWithOfficial: results.length - disagreementTotal,
      total: results.length,
      agentAccuracy: results.length ? agentVsWorld / results.length : 0,
      agentAccuracyByType,
    },
    ...(written ? { writtenContext: written } : {}),
    disagreements: { total: disagreementTotal, byCause },
    errors: { count: errors.length, examples: errors.slice(0, 10).map((r) => ({ id: r.id, error: r.error!, failure: r.failure })) },
    startedAt: args.startedAt.toISOString(),
    finishedAt: args.finishedAt.toISOString(),
    durationMs: args.finishedAt.getTime() - args.startedAt.getTime(),
  };
}

/**
 * How the agent's answer would do if the world model's label were the official one: 1 or 0 (right
 * or not), a graded benchmark's score.
 */
function againstWorld<I extends BenchItem>(benchmark: Benchmark<I>, items: readonly I[], r: ItemResult): number {
  const graded = benchmark.graded !== undefined;
  const value = (v: Pick<Verdict, "correct" | "score">) => (graded ? (v.score ?? 0) : v.correct ? 1 : 0);
  if (r.agrees) return value(r);
  const item = items[r.index];
  if (!item || item.id !== r.id || r.worldModel === null) return 0;
  return value(benchmark.judge({ ...item, answer: r.worldModel }, r.answer));
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function table(header: readonly string[], rows: readonly (readonly string[])[], align: readonly ("l" | "r")[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const cell = (s: string, i: number) => (align[i] === "r" ? s.padStart(widths[i]!) : s.padEnd(widths[i]!));
  const line = (r: readonly string[]) => `| ${r.map((s, i) => cell(s, i)).join(" | ")} |`;
  const sep = `|${widths.map((w, i) => (align[i] === "r" ? "-".repeat(w + 1) + ":" : ":" + "-".repeat(w + 1))).join("|")}|`;
  return [line(header), sep, ...rows.map(line)];
}

/** A graded benchmark's mean score is written as a number (0.617), accuracy as a percentage. */
const score = (x: number, graded: Graded | undefined) => (graded ? x.toFixed(3) : pct(x));

function statRow(name: string, s: Stat, graded: Graded | undefined): string[] {
  return [name, String(s.total), String(s.correct), score(s.accuracy, graded)];
}

/** The report as Markdown (also what the terminal prints: pipe tables read well in both). */
export function renderReport(report: BenchReport, opts: { maxItemsPerCause?: number } = {}): string {
  const out: string[] = [];
  out.push(`## ${report.title}: agent \`${report.agent}\`, ${report.mode} mode`);
  out.push("");
  out.push(`Data: \`${report.data}\`${report.runId ? ` · run \`${report.runId}\`` : ""} · ${report.total} questions · ${(report.durationMs / 1000).toFixed(2)} s`);
  out.push("");
  const g = report.graded;
  const rows = Object.entries(report.byType).map(([t, s]) => statRow(t, s, g));
  rows.push(statRow("**all**", { total: report.total, correct: report.correct, accuracy: report.accuracy }, g));
  out.push(...table(["question type", "total", g?.correct ?? "correct", g?.score ?? "accuracy"], rows, ["l", "r", "r", "r"]));
  for (const [name, values] of Object.entries(report.byTypeAndSplit)) {
    const valueNames = Object.keys(values);
    out.push("");
    out.push(`By ${name}:`);
    out.push("");
    const types = Object.keys(report.byType);
    const body = types.map((t) => [t, ...valueNames.map((v) => cellOf(values[v]![t], g))]);
    body.push(["**all**", ...valueNames.map((v) => cellOf(report.splits[name]![v], g))]);
    out.push(...table(["question type", ...valueNames.map((v) => `${name}=${v}`)], body, ["l", ...valueNames.map(() => "r" as const)]));
  }
  if (report.metrics && Object.keys(report.metrics).length) {
    out.push("");
    out.push(...table(["metric", "value"], Object.entries(report.metrics).map(([k, v]) => [k, Number.isInteger(v) ? String(v) : v.toFixed(4)]), ["l", "r"]));
  }
  out.push("");
  const wm = report.worldModel;
  out.push(
    `World model vs official labels: ${wm.agreeWithOfficial}/${wm.total} agree (${pct(wm.total ? wm.agreeWithOfficial / wm.total : 0)}); ` +
      `the agent against the world model's labels: ${score(wm.agentAccuracy, g)}.`,
  );
  const w = report.writtenContext;
  if (w) {
    out.push("");
    out.push(`Written context (the agent's own, against the world model's): ${w.exact}/${w.questions} traces exact (${pct(w.exactShare)}), ${w.linesRight}/${w.lines} lines right (${pct(w.lineShare)}).`);
    out.push("");
    out.push(...table(["question type", "exact traces"], Object.entries(w.exactShareByType).map(([t, x]) => [t, pct(x)]), ["l", "r"]));
  }
  if (report.disagreements.total) {
    out.push("");
    out.push(`Disagreements by cause (${report.disagreements.total}):`);
    const max = opts.maxItemsPerCause ?? 3;
    for (const [cause, c] of Object.entries(report.disagreements.byCause).sort((a, b) => b[1].count - a[1].count)) {
      out.push("");
      out.push(`- **${cause}** (${c.count}): ${c.description}`);
      for (const d of c.items.slice(0, max)) {
        const where = d.line !== undefined ? `${d.file}:${d.line}` : d.field !== undefined ? `${d.file} (${d.field})` : d.file;
        out.push(`  - \`${where}\` ${d.question} official: ${fmt(d.official)}, world model: ${fmt(d.worldModel)}${d.note ? ` (${d.note})` : ""}`);
      }
      if (c.items.length > max) out.push(`  - ... ${c.items.length - max} more in the JSON report`);
    }
  }
  if (report.errors.count) {
    out.push("");
    out.push(`Agent failures (fallback used): ${report.errors.count}; first: ${report.errors.examples[0]?.error ?? ""}`);
  }
  return out.join("\n") + "\n";
}

function cellOf(s: Stat | undefined, graded: Graded | undefined): string {
  return s ? `${score(s.accuracy, graded)} (${s.correct}/${s.total})` : "-";
}

function fmt(x: string | readonly string[] | null): string {
  if (x === null) return "(none)";
  return typeof x === "string" ? x : `[${x.join(", ")}]`;
}
