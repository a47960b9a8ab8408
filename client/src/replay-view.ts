/**
 * Replays a logged episode (a room's, a benchmark story's, an imported context) step by step from
 * any seat: a timeline with play, pause and step, and a perspective switch. The world's
 * perspective shows the state and every agent's observation, mental state and action; an agent's
 * shows only what that agent perceived, what it believed and what it did. The leak audit's marks
 * sit on the timeline and on the actions they were found in ("states that ... : why").
 *
 * A replay is an analyst's tool over a finished log: every perspective of it is readable to whoever
 * may read the run (the API decides that), unlike a live room's seats.
 */
import { api, type EpisodeAudit, type Leak } from "./api.js";
import { h, replace } from "./dom.js";
import { agentAct, agentsHead } from "./timeline-labels.js";
import { buildReplay, type AgentStep, type Replay, type ReplayStep } from "./replay-model.js";

const WORLD = "world";
const SPEEDS = [250, 600, 1200];

export interface ReplayOptions {
  /** The perspective to start from ("world" or an agent). */
  readonly seat?: string;
  /** The timestep to start at. */
  readonly t?: number;
  /** Called with the perspective and timestep shown, to keep the address in step. */
  readonly onMove?: (seat: string, t: number) => void;
}

/** Builds the replay into `box`; returns a function that stops it (its timer). */
export function showReplay(box: HTMLElement, runId: string, index: number, opts: ReplayOptions = {}): () => void {
  replace(box, h("p.muted", `loading episode ${index}…`));
  let timer: number | undefined;
  let stopped = false;
  const stop = () => {
    if (timer !== undefined) window.clearInterval(timer);
    timer = undefined;
  };
  (async () => {
    const [ctx, audit] = await Promise.all([api.episode(runId, index), api.audit(runId, index).catch((err: unknown) => (err as Error).message)]);
    if (stopped) return;
    const replay = buildReplay(ctx, typeof audit === "string" ? undefined : audit);
    if (replay.steps.length === 0) {
      replace(box, h("p.muted", "this episode has no timesteps"));
      return;
    }
    let seat = opts.seat && (opts.seat === WORLD || replay.agents.includes(opts.seat)) ? opts.seat : WORLD;
    let at = Math.min(Math.max(0, replay.steps.findIndex((s) => s.timestep === opts.t)), replay.steps.length - 1);
    let speed = SPEEDS[1]!;

    const tabs = h("nav.tabs#replay-perspectives");
    const scrub = h("input#replay-scrub", { type: "range", min: 0, max: replay.steps.length - 1, step: 1, value: String(at) });
    const clock = h("span#replay-clock.mono");
    const play = h("button#replay-play.primary", "▶ play");
    const marks = h("div.replay-marks#replay-marks");
    const steps = h("ol.steps#replay-steps");
    const auditLine = h("p.small#replay-audit", auditSummary(audit));
    const go = (i: number) => {
      at = Math.min(Math.max(0, i), replay.steps.length - 1);
      if (at === replay.steps.length - 1) pause();
      render();
    };
    const pause = () => {
      stop();
      play.textContent = "▶ play";
    };
    const start = () => {
      if (at === replay.steps.length - 1) at = 0;
      stop();
      timer = window.setInterval(() => go(at + 1), speed);
      play.textContent = "❚❚ pause";
      render();
    };
    play.addEventListener("click", () => (timer === undefined ? start() : pause()));
    scrub.addEventListener("input", () => {
      pause();
      go(Number(scrub.value));
    });
    // The leak marks along the timeline: one per timestep with leaks, where the scrubber puts it.
    replace(
      marks,
      replay.steps.map((s, i) =>
        s.leaks.length
          ? h("button.mark", { dataset: { timestep: String(s.timestep) }, title: s.leaks.map(leakLine).join("\n"), style: `left: ${(100 * i) / Math.max(1, replay.steps.length - 1)}%`, onclick: () => (pause(), go(i)) }, "●")
          : null,
      ),
    );
    const controls = h(
      "div.replay-controls#replay-controls",
      h("button#replay-first", { title: "first timestep", onclick: () => (pause(), go(0)) }, "« first"),
      h("button#replay-back", { title: "one timestep back", onclick: () => (pause(), go(at - 1)) }, "◀ step"),
      play,
      h("button#replay-step", { title: "one timestep on", onclick: () => (pause(), go(at + 1)) }, "step ▶"),
      h("button#replay-last", { title: "last timestep", onclick: () => (pause(), go(replay.steps.length - 1)) }, "last »"),
      h(
        "select#replay-speed",
        {
          title: "time per timestep when playing",
          onchange: (e: Event) => {
            speed = Number((e.target as HTMLSelectElement).value);
            if (timer !== undefined) start();
          },
        },
        SPEEDS.map((ms) => h("option", { value: String(ms), selected: ms === speed }, `${ms / 1000} s`)),
      ),
      clock,
    );
    replace(box, h("h3", `Episode ${index}: replay`), tabs, controls, h("div.replay-track", scrub, marks), auditLine, h("div.timeline.replay", steps), h("a", { href: `api/runs/${encodeURIComponent(runId)}/episodes/${index}`, target: "_blank" }, "socialized context (JSON)"));

    const render = () => {
      const step = replay.steps[at]!;
      scrub.value = String(at);
      clock.textContent = `t${step.timestep} · ${at + 1} of ${replay.steps.length}`;
      replace(
        tabs,
        [WORLD, ...replay.agents].map((n) =>
          h(`button.tab${n === seat ? ".active" : ""}`, { dataset: { perspective: n }, onclick: () => ((seat = n), render()) }, n === WORLD ? "World" : n, leaksOf(replay, n, at) ? h("span.badge.leak", String(leaksOf(replay, n, at))) : null),
        ),
      );
      // Everything up to the current timestep, the current one marked (and kept in view).
      replace(steps, replay.steps.slice(0, at + 1).map((s, i) => (seat === WORLD ? worldStep(replay, s, i === at) : agentStep(s, seat, i === at))));
      steps.lastElementChild?.scrollIntoView({ block: "nearest" });
      opts.onMove?.(seat, step.timestep);
    };
    render();
  })().catch((err: unknown) => {
    if (!stopped) replace(box, h("p.error", (err as Error).message));
  });
  return () => {
    stopped = true;
    stop();
  };
}

/** Leaks in `seat`'s actions (every agent's for the world) up to step index `at`. */
function leaksOf(replay: Replay, seat: string, at: number): number {
  let n = 0;
  for (const s of replay.steps.slice(0, at + 1)) n += seat === WORLD ? s.leaks.length : (s.agents.get(seat)?.leaks.length ?? 0);
  return n;
}

function auditSummary(audit: EpisodeAudit | string): string {
  if (typeof audit === "string") return `leak audit unavailable: ${audit}`;
  if (!audit.audited) return `not audited for leaks: ${audit.reason ?? "?"}`;
  return `leak audit (${audit.world}): ${audit.actions} actions, ${audit.leaks.length} leak${audit.leaks.length === 1 ? "" : "s"}`;
}

function leakLine(l: Leak): string {
  return `${l.agent} states that ${l.fact.text}${l.sample !== undefined ? ` (sample ${l.sample})` : ""}: ${l.why}`;
}

function leakMarks(leaks: readonly Leak[]) {
  return leaks.map((l) => h("div.leak", { title: l.why, dataset: { fact: l.fact.id } }, h("strong", "leak"), ` states that ${l.fact.text}`, l.sample !== undefined ? ` (sample ${l.sample})` : "", h("div.small", l.why)));
}

function perceivedOf(a: AgentStep, state: string | undefined) {
  if (!a.perceived) return h("span.muted", "perceives nothing");
  if (a.sameAsState && state !== undefined && a.perceived === state) return h("span.muted", "sees everything that happened");
  return h("span.obs-text", a.perceived);
}

function mindOf(a: AgentStep, onlyChanges: boolean) {
  if (!a.mind || (onlyChanges && !a.mindChanged)) return null;
  return h("div.mind", a.mind);
}

function worldStep(replay: Replay, s: ReplayStep, current: boolean): HTMLElement {
  return h(
    `li.step${current ? ".current" : ""}`,
    { dataset: { timestep: String(s.timestep) } },
    h("div.t", `t${s.timestep}`),
    h(
      "div.body",
      h("div.state", s.state || h("span.muted", "(nothing has happened yet)")),
      h(
        "table.agents",
        agentsHead(s.timestep),
        h("tbody", replay.agents.map((name) => {
          const a = s.agents.get(name)!;
          return h(
            "tr",
            { dataset: { agent: name } },
            h("th", name),
            h("td", perceivedOf(a, s.state), mindOf(a, true)),
            h("td.act", a.action === "none" ? h("span.muted", "—") : a.action, leakMarks(a.leaks)),
          );
        })),
      ),
    ),
  );
}

function agentStep(s: ReplayStep, seat: string, current: boolean): HTMLElement {
  const a = s.agents.get(seat)!;
  return h(
    `li.step${current ? ".current" : ""}`,
    { dataset: { timestep: String(s.timestep) } },
    h("div.t", `t${s.timestep}`),
    h(
      "div.body",
      h("div.perceived", perceivedOf(a, undefined)),
      // The agent's beliefs at this step (held until they change), shown in full at the current one.
      mindOf(a, !current),
      agentAct(a.action, s.timestep, leakMarks(a.leaks)),
    ),
  );
}
