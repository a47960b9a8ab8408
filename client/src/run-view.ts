/** A run: its record, its report (a benchmark's score table), and its episodes page by page. */
import { api, type Report, type SocializedContext } from "./api.js";
import { ago, h, pct, replace } from "./dom.js";

const PAGE = 10;

export function showRun(app: HTMLElement, runId: string): () => void {
  const head = h("div.room-head", h("p.muted", "loading…"));
  const reportBox = h("div");
  const list = h("div.card#episodes");
  const viewer = h("div.card#episode");
  app.append(head, reportBox, h("div.run-grid", list, viewer));
  let offset = 0;

  const showEpisode = async (index: number) => {
    replace(viewer, h("p.muted", `loading episode ${index}…`));
    try {
      const ctx = await api.episode(runId, index);
      replace(viewer, h("h3", `Episode ${index}: socialized context`), contextTable(ctx), h("a", { href: `api/runs/${encodeURIComponent(runId)}/episodes/${index}`, target: "_blank" }, "JSON"));
    } catch (err) {
      replace(viewer, h("p.muted", (err as Error).message));
    }
  };

  const page = async () => {
    const r = await api.episodes(runId, offset, PAGE);
    replace(
      list,
      h("h3", `Episodes (${r.total})`),
      h(
        "ol.episodes",
        { start: offset },
        r.episodes.map((e, i) =>
          h("li", h("a", { href: "javascript:void 0", onclick: () => void showEpisode(offset + i) }, describe(e))),
        ),
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
  })().catch((err: unknown) => replace(head, h("h2", "Run"), h("p.error", (err as Error).message)));
  return () => undefined;
}

function describe(e: Record<string, unknown>): string {
  if (e.kind === "benchmark_item") {
    const r = e.result as { id: string; type: string; answer: string; correct: boolean };
    return `${r.correct ? "✓" : "✗"} ${r.type}: ${r.answer || "(no answer)"}`;
  }
  if (e.kind === "room_episode") return `${String(e.title)} (seed ${String(e.seed)}, ${String(e.end)})`;
  if (e.kind === "demo_story") return `demo story: ${String(e.storyType)}`;
  return String(e.kind ?? "episode");
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

function contextTable(ctx: SocializedContext): HTMLElement {
  return h(
    "table.list.context",
    h("thead", h("tr", h("th", "t"), h("th", "state"), h("th", "observations"), h("th", "actions"))),
    h(
      "tbody",
      ctx.socialized_context.map((s) =>
        h("tr", h("td", s.timestep), h("td", s.state), h("td", s.observations.map((o) => h("div", o))), h("td", s.actions.map((a) => h("div", a)))),
      ),
    ),
  );
}
