/**
 * A room: the timeline of timesteps seen from one perspective (the world's, or any one agent's),
 * the seats, the person's panel when this page holds a seat, and a benchmark's progress.
 *
 * What this page can show is what the server sent it: a spectator of a public room receives
 * every perspective; a page in a seat receives its own agent's only, so its perspective switch
 * offers just that one. A social room shows its cascade as a tree or as feeds (social-view.ts).
 */
import { Client, type Room } from "@colyseus/sdk";
import {
  C2S,
  S2C,
  type ActionResultMessage,
  type JoinOptions,
  type QuizAnswerResultMessage,
  type QuizMessage,
  type QuizResultMessage,
  type Leak,
  type PerspectiveStepJson as Step,
  type RoomStateJson as StateJson,
  type PerspectiveView,
  type PostResultMessage,
  type SeatMessage,
  type SocialRoomStateJson,
  type TurnMessage,
  type TurnOverMessage,
  SOCIAL_C2S,
  SOCIAL_S2C,
} from "../../server/protocol.js";
import { renderProgress } from "./benchmark-panel.js";
import { agentAct, agentsHead } from "./timeline-labels.js";
import { h, keepChildren, myName, replace } from "./dom.js";
import { EconomyPanel } from "./economy-panel.js";
import { SeatPanel } from "./seat-panel.js";
import { PostBox, socialMain, userBox, WORLD_FEED, type SocialMode } from "./social-view.js";
import { QuizForm, renderQuizScores } from "./quiz-panel.js";

const WORLD = "world";
const tokenKey = (roomId: string) => `sw-seat:${roomId}`;

export function showRoom(app: HTMLElement, roomId: string, params: URLSearchParams): () => void {
  const seatWanted = params.get("seat") ?? undefined;
  const tokenParam = params.get("token") ?? undefined;
  const header = h("div.room-head");
  const tabs = h("nav.tabs#perspectives");
  const timeline = h("div.timeline#timeline");
  const seatsBox = h("div.card#seats");
  const progressBox = h("div.card.progress#progress");
  const quizBox = h("div.card#quiz-box");
  let quizForm: QuizForm | undefined;
  const aside = h("aside");
  const plots = h("div.plots");
  app.append(header, h("div.room-grid", h("section.main", tabs, plots, timeline), aside));
  replace(header, h("p.muted", "connecting…"));

  let room: Room | undefined;
  let state: StateJson | undefined;
  let perspective: string | undefined;
  let mySeat: string | undefined;
  let panel: SeatPanel | undefined;
  // A world whose spectators get plots (its world perspective's data): the economy's.
  let economy: EconomyPanel | undefined;
  let closed = false;
  let scheduled = false;
  let social: SocialMode = { kind: "tree" };
  let postBox: PostBox | undefined;
  // A social room's tabs: its perspectives and the user-view tab, redrawn on every patch, around the spectator's user box.
  const socialTabs = h("span.tab-group");
  const socialUserTab = h("span.tab-group");
  let socialUserBox: HTMLElement | undefined;
  let lastTimestep = -1;
  const askView = (user: string) => {
    social = { kind: "user", user, view: undefined };
    room?.send(SOCIAL_C2S.perspective, { user });
    schedule();
  };

  const render = () => {
    scheduled = false;
    if (!state || closed) return;
    const s = state;
    const last = s.timeline.at(-1)?.timestep ?? 0;
    replace(
      header,
      h("h2", s.title),
      h(
        "div.meta",
        h(`span.status.${s.status}`, s.status),
        s.note ? h("span.muted", s.note) : null,
        s.kind !== "benchmark" ? h("span#clock", `episode ${s.episode} · timestep ${last}`) : null,
        s.visibility === "private" ? h("span.badge", "private") : null,
        s.runId ? h("a", { href: `#/run/${encodeURIComponent(s.runId)}` }, "run log") : null,
        h("a", { href: "#/" }, "lobby"),
      ),
    );
    if (s.kind === "social") {
      renderSocial(s as SocialRoomStateJson);
      return;
    }
    const names = Object.keys(s.perspectives ?? {});
    const order = [WORLD, ...s.agents].filter((n) => names.includes(n));
    if (!perspective || !order.includes(perspective)) perspective = order.includes(WORLD) ? WORLD : order[0];
    replace(
      tabs,
      order.map((n) =>
        h(
          `button.tab${n === perspective ? ".active" : ""}`,
          {
            dataset: { perspective: n },
            onclick: () => {
              perspective = n;
              render();
            },
          },
          n === WORLD ? "World" : n === mySeat ? `${n} (you)` : n,
        ),
      ),
      order.length === 0 ? h("span.muted", "no perspective to show yet") : null,
    );
    const worldSteps = s.perspectives[WORLD]?.steps;
    if (s.kind === "simulation" && s.world === "economy" && worldSteps) {
      economy ??= new EconomyPanel();
      economy.update(s.episode, worldSteps);
      if (plots.firstChild !== economy.element) replace(plots, economy.element);
    }
    const atBottom = timeline.scrollHeight - timeline.scrollTop - timeline.clientHeight < 40;
    if (s.kind === "benchmark") replace(timeline, benchmarkTimeline(s, perspective));
    else replace(timeline, simulationTimeline(s, perspective));
    if (atBottom) timeline.scrollTop = timeline.scrollHeight;

    replace(
      seatsBox,
      h("h3", "Seats"),
      h(
        "ul.seats",
        s.agents.map((a) => {
          const seat = s.seats[a];
          if (!seat) return null;
          const left = seat.waiting && seat.deadline ? Math.max(0, Math.ceil((seat.deadline - Date.now()) / 1000)) : undefined;
          return seatRow(a, seat, left !== undefined ? h("span.badge.waiting", `thinking · ${left}s`) : null);
        }),
      ),
    );
    if (s.kind === "benchmark") {
      renderProgress(progressBox, s.progress);
      panel?.verdicts(s.progress?.recent ?? []);
    }
    renderQuizScores(quizBox, s.quiz);
    replace(aside, quizForm?.element, panel?.element, s.kind === "benchmark" ? progressBox : null, s.quiz?.length ? quizBox : null, seatsBox);
  };
  /** A seat in the list: who plays it, its status, and a link to take it when it is open to this page. */
  const seatRow = (a: string, seat: StateJson["seats"][string], status: HTMLElement | null, more: HTMLElement | null = null) => {
    const who = seat.occupant ? `${seat.occupant}${seat.connected ? "" : " (reconnecting)"}` : seat.controller === "none" ? "nobody" : seat.controller;
    return h(
      "li",
      { dataset: { seat: a } },
      h("strong", a),
      " ",
      h("span.muted", who),
      status,
      seat.human && !seat.occupant && !mySeat
        ? h("a.button.take", { href: `#/room/${encodeURIComponent(roomId)}?seat=${encodeURIComponent(a)}${tokenParam ? `&token=${encodeURIComponent(tokenParam)}` : ""}` }, "take seat")
        : null,
      more,
    );
  };
  /** Tabs: the tree, every item, people's feeds, and (for a spectator) any user's view; a seated page has its own feed. */
  const renderSocial = (s: SocialRoomStateJson) => {
    const feeds = Object.keys(s.feeds ?? {}).filter((n) => n !== WORLD_FEED);
    const modes: [SocialMode, string][] = [
      ...(s.feeds[WORLD_FEED] ? ([[{ kind: "tree" }, "Cascade"], [{ kind: "feed", name: WORLD_FEED }, "All items"]] as [SocialMode, string][]) : []),
      ...feeds.map((n): [SocialMode, string] => [{ kind: "feed", name: n }, n === mySeat ? `${n} (you)` : n]),
    ];
    if (mySeat && social.kind !== "feed") social = { kind: "feed", name: mySeat };
    const active = (m: SocialMode) => m.kind === social.kind && (m.kind !== "feed" || (social.kind === "feed" && m.name === social.name));
    // The user box is made once and only moved when the tabs' layout changes: made afresh on every
    // patch (a tick can be 300 ms), it dropped the name being typed and the focus with it.
    if (!mySeat) socialUserBox ??= userBox(askView);
    const parts = [socialTabs, mySeat ? undefined : socialUserBox, socialUserTab].filter((n): n is HTMLElement => n !== undefined);
    keepChildren(tabs, parts);
    replace(
      socialTabs,
      modes.map(([m, label]) =>
        h(`button.tab${active(m) ? ".active" : ""}`, { dataset: { perspective: m.kind === "feed" ? m.name : m.kind }, onclick: () => ((social = m), render()) }, label),
      ),
    );
    replace(socialUserTab, social.kind === "user" ? h("button.tab.active", { dataset: { perspective: `user:${social.user}` } }, `${social.user}'s view`) : null);
    const atBottom = timeline.scrollHeight - timeline.scrollTop - timeline.clientHeight < 40;
    replace(timeline, socialMain(s, social));
    if (atBottom && social.kind !== "tree") timeline.scrollTop = timeline.scrollHeight;
    // A thousand users' seats: the people's and those not played by the rule agent are listed.
    const listed = s.agents.filter((a) => s.seats[a] && (s.seats[a]!.human || s.seats[a]!.controller !== "rule"));
    replace(
      seatsBox,
      h("h3", "Seats"),
      h("p.muted", `${s.users} users; ${s.agents.length - listed.length} played by the latent model's rule agent.`),
      h(
        "ul.seats",
        listed.map((a) => {
          const seat = s.seats[a]!;
          return seatRow(a, seat, seat.waiting ? h("span.badge.waiting", "in the app") : null, !mySeat ? h("button.link", { onclick: () => askView(a) }, "view") : null);
        }),
      ),
    );
    if (mySeat) postBox ??= new PostBox((content, topic) => room?.send(SOCIAL_C2S.post, { content, ...(topic ? { topic } : {}) }));
    // Moved only when they change: moving the post box would take the focus from what is being typed.
    const want = [panel?.element, mySeat ? postBox?.element : undefined, seatsBox].filter((n): n is HTMLElement => n !== undefined);
    keepChildren(aside, want);
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(render);
    }
  };

  const connect = async () => {
    const client = new Client();
    // The seat's token is kept per browser (localStorage, not the tab's sessionStorage): a person who
    // closes the tab and comes back, by the room's link or the lobby's, gets the seat back at once,
    // while the room still keeps it for them, instead of "taken by" themselves until it is released.
    const stored = localStorage.getItem(tokenKey(roomId)) ?? undefined;
    const name = myName() || undefined;
    const attempts: JoinOptions[] = [];
    if (seatWanted) {
      const token = tokenParam ?? stored;
      attempts.push({ seat: seatWanted, ...(token ? { token } : {}), ...(name ? { name } : {}) });
      // A remembered token may have expired (the seat was released): claim the seat afresh.
      if (!tokenParam && stored) attempts.push({ seat: seatWanted, ...(name ? { name } : {}) });
    } else {
      const token = tokenParam ?? stored;
      attempts.push(token ? { token } : {});
      // The remembered seat is gone: watch as a spectator.
      if (!tokenParam && stored) attempts.push({});
    }
    let lastError: unknown;
    for (const [i, options] of attempts.entries()) {
      try {
        room = await client.joinById(roomId, options);
        break;
      } catch (err) {
        lastError = err;
        if (i === 0 && !tokenParam && stored && /token|taken/.test((err as Error).message)) localStorage.removeItem(tokenKey(roomId));
      }
    }
    if (!room) throw lastError instanceof Error ? lastError : new Error(String(lastError));
    if (closed) {
      void room.leave();
      return;
    }
    const r = room;
    r.onStateChange((st) => {
      state = (st as { toJSON(): StateJson }).toJSON();
      // A requested view is a snapshot: asked again at each new timestep while it is shown.
      const t = state.timeline.at(-1)?.timestep ?? -1;
      if (t !== lastTimestep && social.kind === "user") r.send(SOCIAL_C2S.perspective, { user: social.user });
      lastTimestep = t;
      schedule();
    });
    r.onMessage(SOCIAL_S2C.perspective, (v: PerspectiveView) => {
      if (social.kind === "user" && social.user === v.user) social = { ...social, view: v };
      schedule();
    });
    r.onMessage(SOCIAL_S2C.postResult, (m: PostResultMessage) => {
      postBox?.result(m.ok, m.ok ? "posted: it goes out at the next timestep" : m.error);
    });
    r.onMessage(S2C.seat, (m: SeatMessage) => {
      localStorage.setItem(tokenKey(roomId), m.token);
      mySeat = m.agent || undefined;
      perspective = mySeat;
      if (!panel)
        panel = new SeatPanel(
          m.agent,
          (action, timestep) => r.send(C2S.act, { action, timestep }),
          () => {
            localStorage.removeItem(tokenKey(roomId));
            location.hash = `#/room/${encodeURIComponent(roomId)}`;
          },
          state?.kind === "benchmark" ? "question" : "timestep",
        );
      else panel.setAgent(m.agent);
      schedule();
    });
    r.onMessage(S2C.turn, (m: TurnMessage) => panel?.setTurn(m));
    r.onMessage(S2C.turnOver, (m: TurnOverMessage) => panel?.turnOver(m));
    r.onMessage(S2C.actionResult, (m: ActionResultMessage) => panel?.result(m));
    const form = () => (quizForm ??= new QuizForm((episode, id, answer) => r.send(C2S.quizAnswer, { episode, id, answer })));
    r.onMessage(S2C.quiz, (m: QuizMessage) => {
      form().open(m);
      schedule();
    });
    r.onMessage(S2C.quizAnswerResult, (m: QuizAnswerResultMessage) => form().acknowledged(m));
    r.onMessage(S2C.quizResult, (m: QuizResultMessage) => form().closed(m));
    r.onMessage(S2C.error, (m: { error: string }) => console.warn(`room: ${m.error}`));
    r.onLeave((code: number) => {
      if (closed) return;
      replace(header, h("h2", state?.title ?? "room"), h("p.error", `disconnected from the room (${code}). `, h("a", { href: "#/" }, "back to the lobby")));
    });
  };
  connect().catch((err: unknown) => {
    replace(header, h("h2", "Cannot join the room"), h("p.error#join-error", (err as Error).message), h("a", { href: "#/" }, "back to the lobby"));
  });
  const clock = window.setInterval(() => state && Object.values(state.seats).some((s) => s.waiting) && schedule(), 1000);

  return () => {
    closed = true;
    clearInterval(clock);
    panel?.dispose();
    economy?.dispose();
    if (room) void room.leave();
  };
}

function stepsOf(s: StateJson, name: string): Map<number, Step> {
  return new Map((s.perspectives[name]?.steps ?? []).map((x) => [x.timestep, x]));
}

function sourceBadge(source: string) {
  return source === "human" ? h("span.badge.human", "person") : source === "fallback" ? h("span.badge.fallback", "fallback") : null;
}

function observation(step: Step, state: string | undefined) {
  if (!step.text) return h("span.muted", "perceives nothing");
  if (step.sameAsState && state !== undefined && step.text === state) return h("span.muted", "sees everything that happened");
  return h("span.obs-text", step.text);
}

/** Mental states are shown when they change (as the socialized context writes them). */
function mind(step: Step, previous: Step | undefined) {
  if (!step.mentalState || step.mentalState === previous?.mentalState) return null;
  return h("div.mind", step.mentalState);
}

function simulationTimeline(s: StateJson, perspective: string | undefined): HTMLElement {
  if (!perspective) return h("p.muted", "Nothing to show yet.");
  const agents = s.agents;
  if (perspective === WORLD) {
    const world = s.perspectives[WORLD]?.steps ?? [];
    const byAgent = new Map(agents.map((a) => [a, stepsOf(s, a)]));
    return h(
      "ol.steps",
      world.map((w) => {
        const leaks = w.leaks ? (safeJson(`{"l":${w.leaks}}`).l as Leak[] | undefined) ?? [] : [];
        return h(
          "li.step",
          { dataset: { timestep: String(w.timestep) } },
          h("div.t", `t${w.timestep}`),
          h("div.body", h("div.state", w.text === "none" ? h("span.muted", "(nothing has happened yet)") : w.text), h(
            "table.agents",
            agentsHead(w.timestep),
            h("tbody", agents.map((a) => {
              const mine = byAgent.get(a)?.get(w.timestep);
              const prev = byAgent.get(a)?.get(w.timestep - 1);
              if (!mine) return null;
              return h(
                "tr",
                h("th", a),
                h("td", observation(mine, w.text), mind(mine, prev)),
                h(
                  "td.act",
                  mine.action === "none" ? h("span.muted", "—") : mine.action,
                  sourceBadge(mine.source),
                  leaks.filter((l) => l.agent === a).map((l) => h("div.leak", { title: l.why }, h("strong", "leak"), ` states that ${l.fact.text}`)),
                ),
              );
            })),
          )),
        );
      }),
    );
  }
  const steps = s.perspectives[perspective]?.steps ?? [];
  return h(
    "ol.steps",
    steps.map((st, i) =>
      h(
        "li.step",
        { dataset: { timestep: String(st.timestep) } },
        h("div.t", `t${st.timestep}`),
        h(
          "div.body",
          h("div", observation(st, undefined)),
          mind(st, steps[i - 1]),
          agentAct(st.action, st.timestep, sourceBadge(st.source)),
        ),
      ),
    ),
  );
}

function benchmarkTimeline(s: StateJson, perspective: string | undefined): HTMLElement {
  const world = s.perspectives[WORLD]?.steps ?? [];
  const mine = stepsOf(s, "respondent");
  if (perspective === WORLD) {
    return h(
      "ol.steps",
      world.map((w) => {
        const d = safeJson(w.data) as { type?: string; answer?: string; official?: unknown; correct?: boolean; error?: string };
        return h(
          "li.step",
          h("div.t", `#${w.timestep}`),
          h(
            "div.body",
            h("div", d.type ? h("span.badge", d.type) : null, " ", w.text),
            d.answer !== undefined
              ? h(
                  "div.act",
                  h(`span.verdict.${d.correct ? "right" : "wrong"}`, d.correct ? "✓" : "✗"),
                  ` answered: ${d.answer || "(nothing)"}`,
                  h("span.muted", ` · official: ${Array.isArray(d.official) ? d.official.join(", ") : String(d.official)}`),
                  d.error ? h("span.muted", ` · ${d.error}`) : null,
                )
              : h("div.muted", "answering…"),
          ),
        );
      }),
    );
  }
  // The respondent's view: each question (its story is in the seat's panel, or a click away) and
  // the answer, with the verdict once it is scored (the progress' latest outcomes).
  const verdicts = new Map((s.progress?.recent ?? []).map((r) => [r.index, r.correct]));
  return h(
    "ol.steps",
    [...mine.values()].map((st) => {
      const task = safeJson(st.data) as { question?: string; story?: string };
      const verdict = verdicts.get(st.timestep);
      return h(
        "li.step",
        { dataset: { timestep: String(st.timestep) } },
        h("div.t", `#${st.timestep}`),
        h(
          "div.body",
          typeof task.question === "string" ? h("div.question", task.question) : h("pre.text", st.text),
          typeof task.story === "string" ? h("details.story", h("summary.muted.small", "the story"), h("pre.text", task.story)) : null,
          st.action && st.action !== "none"
            ? h("div.act", verdict !== undefined ? h(`span.verdict.${verdict ? "right" : "wrong"}`, verdict ? "✓ " : "✗ ") : null, st.action, sourceBadge(st.source))
            : st.action === "none"
              ? h("div.act.muted", "no answer", sourceBadge(st.source))
              : h("div.muted", "answering…"),
        ),
      );
    }),
  );
}

function safeJson(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}
