/**
 * A stopped server exits once its logs are flushed, whatever its rooms were waiting for: Colyseus
 * (0.18) leaves timers of a room's seats running when the room goes away, and each kept the process
 * alive for the rest of its time after "stopped; every log is flushed." (Ctrl-C seemed to hang).
 */
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { roomWithReservedSeat, seated, serve, type Served } from "./child-server.js";
import { until } from "./raw-client.js";

/** SIGTERM: the server exits with 0 after flushing, well before any of the timers here would end. */
async function expectPromptStop(server: Served): Promise<void> {
  const sent = Date.now();
  server.child.kill("SIGTERM");
  const [code] = (await once(server.child, "exit")) as [number | null];
  expect(server.out()).toContain("every log is flushed");
  expect(code).toBe(0);
  expect(Date.now() - sent).toBeLessThan(10_000);
}

describe("a stopped server exits at once", () => {
  // Colyseus's own reconnection timer outlived the room: the process ran on for the rest of the
  // window (60 s by default, 20 s here).
  it("while a seat waits for its person to come back", async () => {
    const { server, seat, first } = await seated(20);
    first.ws.terminate();
    await until(async () => !(await seat()).connected, 10_000, "the server to see the connection drop");
    expect(await seat()).toMatchObject({ occupied: true, connected: false });

    await expectPromptStop(server);
  }, 30_000);

  // A reservation's timer (seatReservationTimeout, 15 s) outlived the room the same way.
  it("with seats reserved that no client connected to", async () => {
    const server = await serve();
    const { roomId } = await roomWithReservedSeat(server.base, 20);
    const spectator = await fetch(`${server.base}/matchmake/joinById/${roomId}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(spectator.status).toBe(200);
    await expectPromptStop(server);
  }, 30_000);
});
