/** The lobby: live rooms (with open seats to take) and the runs in the store. */
import { api, type RoomSummary, type RunRecord } from "./api.js";
import { ago, h, pct, replace } from "./dom.js";
import { onProgress } from "./progress.js";

export function showLobby(app: HTMLElement): () => void {
  const roomsBox = h("div.card", h("p.muted", "loading rooms…"));
  const runsBox = h("div.card", h("p.muted", "loading runs…"));
  app.append(h("section", h("h2", "Rooms"), roomsBox), h("section", h("h2", "Runs"), runsBox));
  let rooms: RoomSummary[] = [];
  const live = new Map<string, { done: number; total: number; correct: number }>();

  const drawRooms = () => {
    if (rooms.length === 0) return replace(roomsBox, h("p.muted", "No rooms are running. Start the server without --no-demo, or create one through the API."));
    replace(
      roomsBox,
      h(
        "table.list#rooms",
        h("thead", h("tr", h("th", "room"), h("th", "world"), h("th", "status"), h("th", "progress"), h("th", "watching"), h("th", "seats"))),
        h(
          "tbody",
          rooms.map((r) => {
            const p = live.get(r.runId) ?? r.progress;
            return h(
              "tr",
              { dataset: { room: r.roomId } },
              h("td", h("a.room-link", { href: `#/room/${encodeURIComponent(r.roomId)}` }, r.title), r.visibility === "private" ? h("span.badge", "private") : null),
              h("td", r.type === "benchmark" ? `benchmark (${r.world})` : r.world),
              h("td", h(`span.status.${r.status}`, r.status), r.note ? h("div.muted.small", r.note) : null),
              h("td", p ? `${p.done}/${p.total} · ${p.done ? pct(p.correct / p.done) : "–"}` : r.type !== "benchmark" ? `episode ${r.episode}, t${r.timestep}` : ""),
              h("td", String(r.spectators)),
              h(
                "td.seats",
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
        "table.list#runs",
        h("thead", h("tr", h("th", "run"), h("th", "kind"), h("th", "status"), h("th", "result"), h("th", "started"))),
        h(
          "tbody",
          runs.map((run) => {
            const s = run.summary ?? {};
            const result =
              typeof s.accuracy === "number" ? `${String(s.correct)}/${String(s.total)} · ${pct(s.accuracy)}` : typeof s.episodes === "number" ? `${s.episodes} episodes` : typeof s.stories === "number" ? `${s.stories} stories` : "";
            return h(
              "tr",
              h("td", h("a", { href: `#/run/${encodeURIComponent(run.id)}` }, run.title), h("div.muted.small.mono", run.id)),
              h("td", run.kind),
              h("td", h(`span.status.${run.status}`, run.status)),
              h("td", result),
              h("td", ago(run.createdAt)),
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
