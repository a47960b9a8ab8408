/** The lobby: live rooms (with open seats to take) and the runs in the store. */
import { api, type RoomSummary, type RunRecord } from "./api.js";
import { ago, h, pct, replace } from "./dom.js";
import { onProgress } from "./progress.js";

export function showLobby(app: HTMLElement): () => void {
  const roomsBox = h("div.card", h("p.muted", "loading rooms…"));
  const runsBox = h("div.card", h("p.muted", "loading runs…"));
  app.append(firstVisitHint() ?? "", h("section", h("h2", "Rooms"), roomsBox), h("section", h("h2", "Runs"), runsBox));
  let rooms: RoomSummary[] = [];
  const live = new Map<string, { done: number; total: number; correct: number }>();

  const drawRooms = () => {
    if (rooms.length === 0) return replace(roomsBox, h("p.muted", "No rooms are running. Start the server without --no-demo, or create one through the API."));
    replace(
      roomsBox,
      h(
        "table.list.stack#rooms",
        h("thead", h("tr", h("th", "room"), h("th", "world"), h("th", "status"), h("th", "progress"), h("th", "watching"), h("th", "seats"))),
        h(
          "tbody",
          rooms.map((r) => {
            const p = live.get(r.runId) ?? r.progress;
            return h(
              "tr",
              { dataset: { room: r.roomId } },
              h("td.title", h("a.room-link", { href: `#/room/${encodeURIComponent(r.roomId)}` }, r.title), r.visibility === "private" ? h("span.badge", "private") : null),
              h("td", { dataset: { label: "world" } }, r.type === "benchmark" ? `benchmark (${r.world})` : r.world),
              h("td", { dataset: { label: "status" } }, h(`span.status.${r.status}`, r.status), r.note ? h("div.muted.small", r.note) : null),
              h("td", { dataset: { label: "progress" } }, p ? `${p.done}/${p.total} · ${p.done ? pct(p.correct / p.done) : "–"}` : r.type !== "benchmark" ? `episode ${r.episode}, t${r.timestep}` : ""),
              h("td", { dataset: { label: "watching" } }, String(r.spectators)),
              h(
                "td.seats",
                { dataset: { label: "seats" } },
                r.seats.map((s) =>
                  s.human && !s.occupied
                    ? h("a.seat.open", { href: `#/room/${encodeURIComponent(r.roomId)}?seat=${encodeURIComponent(s.agent)}`, title: `take ${s.agent}'s seat` }, `take ${s.agent}`)
                    : h(
                        "span.seat",
                        { title: !s.occupied ? `played by ${s.controller}` : s.connected ? "a person plays this seat" : "kept for a person who lost the connection" },
                        s.agent,
                        s.occupied ? (s.connected ? " 👤" : " 👤 (away)") : "",
                      ),
                ),
              ),
            );
          }),
        ),
      ),
    );
  };

  const drawRuns = (runs: RunRecord[], total: number) => {
    if (runs.length === 0) return replace(runsBox, h("p.muted", "No runs yet."));
    replace(
      runsBox,
      h(
        "table.list.stack#runs",
        h("thead", h("tr", h("th", "run"), h("th", "kind"), h("th", "status"), h("th", "result"), h("th", "started"))),
        h(
          "tbody",
          runs.map((run) => {
            const s = run.summary ?? {};
            const result =
              typeof s.accuracy === "number" ? `${String(s.correct)}/${String(s.total)} · ${pct(s.accuracy)}` : typeof s.episodes === "number" ? `${s.episodes} episodes` : typeof s.stories === "number" ? `${s.stories} stories` : "";
            return h(
              "tr",
              h("td.title", h("a", { href: `#/run/${encodeURIComponent(run.id)}` }, run.title), h("div.muted.small.mono", run.id)),
              h("td", { dataset: { label: "kind" } }, run.kind),
              h("td", { dataset: { label: "status" } }, h(`span.status.${run.status}`, run.status)),
              result ? h("td", { dataset: { label: "result" } }, result) : h("td"),
              h("td", { dataset: { label: "started" } }, ago(run.createdAt)),
            );
          }),
        ),
      ),
      total > runs.length ? h("p.muted.small", `${runs.length} newest of ${total}`) : null,
    );
  };

  let stopped = false;
  const refresh = async () => {
    try {
      rooms = await api.rooms();
      drawRooms();
      const r = await api.runs(0, 30);
      drawRuns(r.runs, r.total);
    } catch (err) {
      replace(roomsBox, h("p.error", `cannot reach the server: ${(err as Error).message}`));
    }
  };
  void refresh();
  const timer = setInterval(() => !stopped && void refresh(), 3000);
  const off = onProgress((_type, e) => {
    if (e.done === undefined || e.total === undefined) return;
    live.set(e.runId, { done: e.done, total: e.total, correct: e.correct ?? 0 });
    drawRooms();
  });
  return () => {
    stopped = true;
    clearInterval(timer);
    off();
  };
}

const HINT_SEEN = "sw-lobby-hint-seen";

/** What to click first, for a first visit (until dismissed: remembered in this browser). */
function firstVisitHint(): HTMLElement | undefined {
  if (localStorage.getItem(HINT_SEEN)) return undefined;
  const box: HTMLElement = h(
    "aside.card.hint#first-visit",
    { "aria-label": "where to start" },
    h("div.row", h("h3", "New here? Start with a room"), h("button.link#hint-dismiss", { onclick: () => (localStorage.setItem(HINT_SEEN, "1"), box.remove()) }, "got it")),
    h(
      "ol.hint-steps",
      h("li", h("strong", "Watch: "), "open a room's name below. The tabs switch perspective: the world's (everything) or one agent's (only what it perceives and believes)."),
      h("li", h("strong", "Play: "), "a ", h("span.seat.open.sample", "take …"), " button puts you in an agent's seat; the room waits for your action each timestep. Type your name above first."),
      h("li", h("strong", "Read: "), "open a run to see its report and replay its episodes step by step. Training runs plot their reward and KL under ", h("a", { href: "#/training" }, "training"), "."),
    ),
  );
  return box;
}
