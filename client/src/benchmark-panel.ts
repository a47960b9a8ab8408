/** A benchmark room's progress: the bar, the score table by question type, the latest outcomes. */
import type { ProgressJson } from "../../server/protocol.js";
import { h, pct, replace } from "./dom.js";

export function renderProgress(el: HTMLElement, p: ProgressJson | undefined): void {
  if (!p || !p.total) return replace(el);
  const acc = p.done ? p.correct / p.done : 0;
  const types = Object.values(p.byType ?? {});
  replace(
    el,
    h("h3", `${p.benchmark} · ${p.agent} · ${p.mode}`),
    // The browser's own progress bar: read out by screen readers as a progress bar, with its value.
    h("progress.bar#bench-progress", { max: p.total, value: p.done, title: `${p.done} of ${p.total}`, "aria-label": "questions answered" }),
    h("p#score", `${p.done}/${p.total} answered · ${p.correct} correct · accuracy ${p.done ? pct(acc) : "–"}${p.finished ? " · finished" : ""}`),
    types.length
      ? h(
          "table.list.scores#score-table",
          h("thead", h("tr", h("th", "question type"), h("th.num", "total"), h("th.num", "correct"), h("th.num", "accuracy"))),
          h(
            "tbody",
            types.map((t) => h("tr", h("td", t.type), h("td.num", String(t.total)), h("td.num", String(t.correct)), h("td.num", t.total ? pct(t.correct / t.total) : "–"))),
            h("tr.total", h("td", "all"), h("td.num", String(p.done)), h("td.num", String(p.correct)), h("td.num", p.done ? pct(acc) : "–")),
          ),
        )
      : null,
    p.recent?.length
      ? h(
          "div.recent",
          p.recent.map((r) => h(`span.dot.${r.correct ? "right" : "wrong"}`, { title: `#${r.index} ${r.type}: ${r.correct ? "correct" : "wrong"} (${r.source})` })),
        )
      : null,
  );
}
