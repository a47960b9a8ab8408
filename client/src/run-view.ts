/**
 * A run: its record, its report (a benchmark's score table), its episodes page by page, and the
 * chosen episode replayed step by step from any seat (replay-view.ts). The address keeps the
 * episode, the perspective and the timestep: #/run/ID/episode/N?seat=Ella&t=4.
 */
import { api, type Report } from "./api.js";
import { ago, h, pct, replace } from "./dom.js";
import { showReplay } from "./replay-view.js";

const PAGE = 10;

export function showRun(app: HTMLElement, runId: string, episode?: number, params: URLSearchParams = new URLSearchParams()): () => void {
  const head = h("div.room-head", h("p.muted", "loading…"));
  const reportBox = h("div");
  const list = h("div.card#episodes");
  const viewer = h("div.card#episode");
  app.append(head, reportBox, h("div.run-grid", list, viewer));
  let offset = episode === undefined ? 0 : Math.floor(episode / PAGE) * PAGE;
  let stopReplay: (() => void) | undefined;
  /** The records of the page shown, by episode index (a benchmark item's question and verdict). */
  const records = new Map<number, Record<string, unknown>>();

  const showEpisode = (index: number, seat?: string, t?: number) => {
    stopReplay?.();
    for (const li of list.querySelectorAll("li[data-episode]")) li.classList.toggle("current", li.getAttribute("data-episode") === String(index));
    const record = records.get(index);
    const item = record?.kind === "benchmark_item" ? itemCard(record.result as ItemResult) : null;
    const replayBox = h("div");
    replace(viewer, item, replayBox);
    const address = (s: string, at: number) => `#/run/${encodeURIComponent(runId)}/episode/${index}?seat=${encodeURIComponent(s)}&t=${at}`;
    // The address follows the replay without a new history entry per step (nor a hashchange: no re-route).
    stopReplay = showReplay(replayBox, runId, index, { ...(seat ? { seat } : {}), ...(t !== undefined ? { t } : {}), onMove: (s, at) => history.replaceState(null, "", address(s, at)) });
  };

  const page = async () => {
    const r = await api.episodes(runId, offset, PAGE);
    records.clear();
    r.episodes.forEach((e, i) => records.set(offset + i, e));
    replace(
      list,
      h("h3", `Episodes (${r.total})`),
      h(
        "ol.episodes",
        { start: offset },
        // `indexes`: each record's place in the log (the records that open quizzes are not listed).
        r.episodes.map((e, i) => {
          const at = r.indexes[i] ?? offset + i;
          return h("li", { value: at, dataset: { episode: String(at) } }, h("a", { href: "javascript:void 0", onclick: () => showEpisode(at) }, describe(e)));
        }),
      ),
      h(
        "div.row",
        h("button", { disabled: offset === 0, onclick: () => ((offset = Math.max(0, offset - PAGE)), void page()) }, "← newer"),
        h("span.muted", `${offset + 1}–${Math.min(offset + PAGE, r.total)}`),
        h("button", { disabled: offset + PAGE >= r.total, onclick: () => ((offset += PAGE), void page()) }, "older →"),
      ),
      r.torn ? h("p.muted.small", "the log's last line was cut off mid-write and is skipped") : null,
    );
  };

  (async () => {
    const { run, report } = await api.run(runId);
    replace(
      head,
      h("h2", run.title),
      h("div.meta", h(`span.status.${run.status}`, run.status), h("span.mono.muted", run.id), h("span.muted", `started ${ago(run.createdAt)}`), h("a", { href: "#/" }, "lobby")),
    );
    if (report) replace(reportBox, reportCard(report));
    await page();
    if (episode !== undefined) {
      const t = params.get("t");
      showEpisode(episode, params.get("seat") ?? undefined, t === null ? undefined : Number(t));
    } else if (records.has(0)) showEpisode(0);
    else replace(viewer, h("p.muted", "This run has no episodes yet."));
  })().catch((err: unknown) => replace(head, h("h2", "Run"), h("p.error", (err as Error).message)));
  return () => stopReplay?.();
}

function describe(e: Record<string, unknown>): string {
  if (e.kind === "benchmark_item") {
    const r = e.result as { id: string; type: string; answer: string; correct: boolean };
    return `${r.correct ? "✓" : "✗"} ${r.type}: ${r.answer || "(no answer)"}`;
  }
  // An episode whose quiz is still open: the server shows its number and why, nothing else.
  if (typeof e.withheld === "string") return `episode ${String(e.episode)}: ${e.withheld}`;
  if (e.kind === "room_episode") return `${String(e.title)} (seed ${String(e.seed)}, ${String(e.end)})`;
  if (e.kind === "demo_story") return `demo story: ${String(e.storyType)}`;
  if (e.kind === "imported_context") return `imported context: ${String(e.source ?? "")}`;
  return String(e.kind ?? "episode");
}

/** The fields of a benchmark item's result (benchmarks/runner.ts, ItemResult) that the card shows. */
interface ItemResult {
  id: string;
  type: string;
  question: string;
  official: string | readonly string[];
  answer: string;
  correct: boolean;
  worldModel: string | readonly string[] | null;
  agrees: boolean;
  cause?: string;
  note?: string;
  error?: string;
}

const answers = (a: string | readonly string[] | null) => (a === null ? "–" : typeof a === "string" ? a : a.join(" / "));

/** A benchmark question as it was asked and answered: the question, the answer, the label, the verdict. */
function itemCard(r: ItemResult): HTMLElement {
  return h(
    `div.item-card.${r.correct ? "right" : "wrong"}#item`,
    h("div.verdict-line", h(`span.verdict.${r.correct ? "right" : "wrong"}`, r.correct ? "✓ right" : "✗ wrong"), h("span.badge", r.type), h("span.mono.muted.small", r.id)),
    h(
      "dl.item-fields",
      h("dt", "question"),
      h("dd#item-question", r.question),
      h("dt", "answer"),
      h("dd#item-answer", r.answer || h("span.muted", "(no answer)"), r.error ? h("div.muted.small", `the agent failed (${r.error}): its fallback answered`) : null),
      h("dt", "label"),
      h("dd#item-label", answers(r.official)),
      r.worldModel !== null ? [h("dt", "world model"), h("dd", answers(r.worldModel), r.agrees ? null : h("span.badge", "disputes the label"))] : null,
      r.cause ? [h("dt", "cause"), h("dd", r.cause)] : null,
      r.note ? [h("dt", "note"), h("dd", r.note)] : null,
    ),
  );
}

function reportCard(r: Report): HTMLElement {
  return h(
    "div.card",
    h("h3", `${r.title} · ${r.agent} · ${r.mode}`),
    h(
      "table.list.scores",
      h("thead", h("tr", h("th", "question type"), h("th.num", "total"), h("th.num", "correct"), h("th.num", "accuracy"))),
      h(
        "tbody",
        Object.entries(r.byType).map(([t, s]) => h("tr", h("td", t), h("td.num", String(s.total)), h("td.num", String(s.correct)), h("td.num", pct(s.accuracy)))),
        h("tr.total", h("td", "all"), h("td.num", String(r.total)), h("td.num", String(r.correct)), h("td.num", pct(r.accuracy))),
      ),
    ),
    h("p.muted.small", `official labels the world model disputes: ${r.disagreements.total} · agent failures: ${r.errors.count}`),
  );
}
