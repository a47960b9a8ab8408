/**
 * The web client: a lobby (rooms and runs), a room view (timeline, perspectives, seats, the
 * person's panel, benchmark progress) and a run view (report and episodes). Hash routes:
 *   #/                      lobby
 *   #/room/ID[?seat=A&token=T]   a room, as a spectator or in A's seat
 *   #/run/ID                a run
 *   #/run/ID/episode/N[?seat=A&t=T]   a run with episode N replayed from A's seat at timestep T
 *   #/training              the training dashboard (reward, KL and accuracy over time)
 */
import { initName } from "./dom.js";
import { showLobby } from "./lobby.js";
import { showRoom } from "./room-view.js";
import { showRun } from "./run-view.js";
import { showTraining } from "./training-view.js";

type Cleanup = () => void;
let cleanup: Cleanup | undefined;

function route(): void {
  cleanup?.();
  cleanup = undefined;
  const app = document.getElementById("app")!;
  app.replaceChildren();
  const [path = "", query = ""] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "room" && parts[1]) cleanup = showRoom(app, parts[1], params);
  else if (parts[0] === "run" && parts[1]) {
    const episode = parts[2] === "episode" && /^\d+$/.test(parts[3] ?? "") ? Number(parts[3]) : undefined;
    cleanup = showRun(app, parts[1], episode, params);
  }
  else if (parts[0] === "training") cleanup = showTraining(app);
  else cleanup = showLobby(app);
}

initName();
window.addEventListener("hashchange", route);
route();
