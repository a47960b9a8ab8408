/**
 * The information-leak audit of a logged run (`socialworld audit --run ID`, the API's episode
 * audit, the web client's replay marks): every record of the run's log that holds a socialized
 * context is audited with its world's fact vocabulary (worlds/core/leak-audit.ts).
 *
 * - room episodes (rooms, self-play, GRPO's sampled groups): the world and seed are logged, so the
 *   scenario's initial state is rebuilt (the world's names, where things are before anyone says)
 *   and the logged turns are audited with their structured action and a model's raw output; the
 *   replies of a GRPO group are alternatives at one decision point, each audited there;
 * - benchmark items: the story's characters' actions (each story once); the respondent's answer is
 *   not audited, since the respondent has read the whole story;
 * - demo stories and imported contexts: their action lines (an imported context names no world:
 *   the world whose grammar reads its sentences, or `world`).
 */
import { readLogPage } from "../store/log-index.js";
import { auditContext, type AuditTurn, type EpisodeAudit, type Leak } from "../worlds/core/leak-audit.js";
import { SocializedContextSchema, type SocializedContext } from "../worlds/core/socialized-context.js";
import { loadFacts, loadScenario, worldOfContext, worldsWith } from "../worlds/registry.js";

export interface RecordAudit {
  /** 0-based position of the record in the run's log. */
  readonly index: number;
  readonly kind: string;
  readonly world: string | null;
  readonly title?: string;
  readonly seed?: number;
  /** False when the record was not audited, with why. */
  readonly audited: boolean;
  readonly reason?: string;
  readonly actions: number;
  readonly leaks: readonly Leak[];
  readonly byAgent: EpisodeAudit["byAgent"];
  /** Room episodes: actions and leaks by who played the seat ("scripted", "llm:...", "human:ana"). */
  readonly byController?: Readonly<Record<string, { actions: number; leaks: number }>>;
}

export interface RunAudit {
  readonly runId: string;
  readonly records: number;
  readonly audited: number;
  readonly actions: number;
  readonly leaks: number;
  /** By agent name over the run (a looping room's stories have new names each time). */
  readonly byAgent: Readonly<Record<string, { actions: number; leaks: number }>>;
  readonly byController: Readonly<Record<string, { actions: number; leaks: number }>>;
  readonly episodes: readonly RecordAudit[];
}

type LogRecord = {
  kind?: unknown;
  world?: unknown;
  benchmark?: unknown;
  title?: unknown;
  seed?: unknown;
  context_id?: string;
  socialized_context?: unknown;
  seats?: unknown;
  turns?: unknown;
};

type LoggedTurn = { agent?: unknown; timestep?: unknown; action?: unknown; actionText?: unknown; raw?: unknown; info?: { grpo?: { sample?: unknown } } };

/** Audits one record of a log; `seen` (context ids already audited) skips a benchmark story's repeats. */
export async function auditRecord(rec: LogRecord, index: number, opts: { world?: string; seen?: Set<string> } = {}): Promise<RecordAudit> {
  const kind = typeof rec.kind === "string" ? rec.kind : "unknown";
  const base = { index, kind, ...(typeof rec.title === "string" ? { title: rec.title } : {}), ...(typeof rec.seed === "number" ? { seed: rec.seed } : {}) };
  const skip = (world: string | null, reason: string): RecordAudit => ({ ...base, world, audited: false, reason, actions: 0, leaks: [], byAgent: {} });
  const parsed = SocializedContextSchema.safeParse(rec.socialized_context);
  if (!parsed.success) return skip(null, "no socialized context in this record");
  const context = parsed.data;
  if (typeof rec.context_id === "string" && opts.seen) {
    if (opts.seen.has(rec.context_id)) return skip(null, "the same story as an earlier record (audited there)");
    opts.seen.add(rec.context_id);
  }
  const world = await worldOf(rec, context, opts.world);
  if (!world) {
    const known = (await worldsWith("facts")).map((w) => w.name);
    return skip(null, `no world names this record and none reads its sentences (known: ${known.join(", ")}; pass --world)`);
  }
  let source;
  try {
    source = await loadFacts(world);
  } catch (err) {
    return skip(world, (err as Error).message);
  }

  const initialState = kind === "room_episode" && typeof rec.seed === "number" ? await initialStateOf(world, rec.seed, context) : undefined;
  const { vocabulary, initialTruths } = source.forEpisode(context, initialState);
  const turns = kind === "room_episode" ? loggedTurns(rec.turns) : undefined;
  const audit = auditContext(context, vocabulary, { ...(turns ? { turns } : {}), initialTruths });
  const byController = kind === "room_episode" ? controllersOf(rec.seats, audit) : undefined;
  return { ...base, world, audited: true, actions: audit.actions, leaks: audit.leaks, byAgent: audit.byAgent, ...(byController ? { byController } : {}) };
}

/** Audits every record of a log, a page at a time; `onProgress` after each page. */
export async function auditRun(runId: string, logPath: string, opts: { world?: string; onProgress?: (done: number, total: number) => void } = {}): Promise<RunAudit> {
  const episodes: RecordAudit[] = [];
  const seen = new Set<string>();
  for (let offset = 0; ; ) {
    const page = readLogPage<LogRecord>(logPath, offset, 200);
    for (let i = 0; i < page.records.length; i++) episodes.push(await auditRecord(page.records[i]!, offset + i, { ...opts, seen }));
    offset += page.records.length;
    opts.onProgress?.(offset, page.total);
    if (page.records.length === 0 || offset >= page.total) break;
  }
  const byAgent: Record<string, { actions: number; leaks: number }> = {};
  const byController: Record<string, { actions: number; leaks: number }> = {};
  const add = (into: Record<string, { actions: number; leaks: number }>, key: string, c: { actions: number; leaks: number }) => {
    const e = (into[key] ??= { actions: 0, leaks: 0 });
    e.actions += c.actions;
    e.leaks += c.leaks;
  };
  for (const e of episodes) {
    for (const [a, c] of Object.entries(e.byAgent)) add(byAgent, a, c);
    for (const [k, c] of Object.entries(e.byController ?? {})) add(byController, k, c);
  }
  const audited = episodes.filter((e) => e.audited);
  return {
    runId,
    records: episodes.length,
    audited: audited.length,
    actions: audited.reduce((n, e) => n + e.actions, 0),
    leaks: audited.reduce((n, e) => n + e.leaks.length, 0),
    byAgent,
    byController,
    episodes,
  };
}

/** The audit as Markdown: totals, per agent and per seat controller, then every leak with its reason. */
export function renderRunAudit(a: RunAudit, opts: { maxLeaks?: number } = {}): string {
  const out: string[] = [];
  out.push(`## Leak audit of run \`${a.runId}\``);
  out.push("");
  out.push(`${a.audited} of ${a.records} records audited · ${a.actions} actions · ${a.leaks} leak${a.leaks === 1 ? "" : "s"}`);
  const table = (title: string, rows: Record<string, { actions: number; leaks: number }>) => {
    const entries = Object.entries(rows);
    if (entries.length === 0) return;
    out.push("", `| ${title} | actions | leaks |`, "|:--|--:|--:|");
    for (const [k, c] of entries.sort((x, y) => y[1].leaks - x[1].leaks || x[0].localeCompare(y[0]))) out.push(`| ${k} | ${c.actions} | ${c.leaks} |`);
  };
  table("agent", a.byAgent);
  table("seat played by", a.byController);
  const leaks = a.episodes.flatMap((e) => e.leaks.map((l) => ({ e, l })));
  if (leaks.length) {
    out.push("", "Leaks:", "");
    const max = opts.maxLeaks ?? 50;
    for (const { e, l } of leaks.slice(0, max)) {
      const where = `record ${e.index}${e.title ? ` (${e.title})` : ""}, t${l.timestep}${l.sample !== undefined ? ` sample ${l.sample}` : ""}`;
      out.push(`- ${where}: **${l.agent}** states that ${l.fact.text} (${l.via === "action" ? "in its action" : "in its text"}). ${l.why}`);
    }
    if (leaks.length > max) out.push(`- ... ${leaks.length - max} more in the JSON`);
  }
  const skipped = a.episodes.filter((e) => !e.audited);
  if (skipped.length) {
    const reasons = new Map<string, number>();
    for (const e of skipped) reasons.set(e.reason ?? "?", (reasons.get(e.reason ?? "?") ?? 0) + 1);
    out.push("", "Not audited:", "");
    for (const [reason, n] of reasons) out.push(`- ${n} record${n === 1 ? "" : "s"}: ${reason}`);
  }
  return out.join("\n") + "\n";
}

async function worldOf(rec: LogRecord, context: SocializedContext, given: string | undefined): Promise<string | undefined> {
  if (typeof rec.world === "string") return rec.world;
  if (typeof rec.benchmark === "string") return rec.benchmark;
  if (rec.kind === "demo_story") return "tomi";
  return given ?? worldOfContext(context);
}

/** The scenario's initial state, when the world and seed rebuild the episode the log holds (same agents). */
async function initialStateOf(world: string, seed: number, context: SocializedContext): Promise<unknown> {
  const factory = await loadScenario(world).catch(() => undefined);
  if (!factory) return undefined;
  const scenario = await factory.create(seed);
  const agents = scenario.world.agents(scenario.initialState);
  return agents.length === context.agents_names.length && agents.every((a, i) => a === context.agents_names[i]) ? scenario.initialState : undefined;
}

function loggedTurns(raw: unknown): AuditTurn[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const out: AuditTurn[] = [];
  for (const t of raw as LoggedTurn[]) {
    if (typeof t?.agent !== "string" || typeof t.timestep !== "number") continue;
    const sample = t.info?.grpo?.sample;
    out.push({
      agent: t.agent,
      timestep: t.timestep,
      ...(t.action !== undefined && t.action !== null ? { action: t.action } : {}),
      ...(typeof t.actionText === "string" && t.actionText !== "none" ? { actionText: t.actionText } : {}),
      ...(typeof t.raw === "string" ? { raw: t.raw } : {}),
      ...(typeof sample === "number" ? { sample } : {}),
    });
  }
  return out;
}

function controllersOf(seats: unknown, audit: EpisodeAudit): Record<string, { actions: number; leaks: number }> | undefined {
  if (!seats || typeof seats !== "object") return undefined;
  const out: Record<string, { actions: number; leaks: number }> = {};
  for (const [agent, c] of Object.entries(audit.byAgent)) {
    const seat = (seats as Record<string, { controller?: unknown; person?: unknown }>)[agent];
    if (!seat) continue;
    const key = typeof seat.person === "string" && seat.person ? `human:${seat.person}` : typeof seat.controller === "string" ? seat.controller : "?";
    const e = (out[key] ??= { actions: 0, leaks: 0 });
    e.actions += c.actions;
    e.leaks += c.leaks;
  }
  return Object.keys(out).length ? out : undefined;
}
