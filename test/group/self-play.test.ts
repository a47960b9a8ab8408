/**
 * One self-play pool whose rooms live in two `serve` processes on one Redis (issue 32): exactly
 * one process trains it (the lease in Redis), the other passes it its episodes, a round's new
 * policy is played by the rooms of both, and when the trainer is killed the other takes the pool
 * over (the lease expires) and trains the next round itself.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { RoomRegistry } from "../../store/room-registry.js";
import { tinyCheckpoint } from "../policy/fixtures.js";
import type { Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { admin, json, pidOf, startGroup } from "./group-checks.js";

let servers: Served[];
let store: string;

beforeAll(async () => {
  ({ servers, store } = await startGroup(2, "sw-group-selfplay-"));
}, 120_000);
const TRAINS = "[self-play shared] this process trains the pool";
/** The round each seat of the room plays (0: the starting policy; -1: another controller). */
const roundsPlayed = async (via: Served, roomId: string, spec: string): Promise<number[]> =>
  (await controllers(via, roomId)).map((c) => (c === spec ? 0 : Number(/^policy:.*\/selfplay\/shared\/round-(\d+)\?/.exec(c)?.[1] ?? -1)));
const controllers = async (via: Served, roomId: string): Promise<string[]> => ((await json(`${via.base}/api/rooms/${roomId}`)).json.seats as { controller: string }[]).map((s) => s.controller);

describe("a self-play pool over two processes", () => {
  it("is trained by one process, on both processes' episodes; its rounds reach the rooms of both; a killed trainer's pool is taken over", async () => {
    const { dir } = await tinyCheckpoint(23);
    const spec = `policy:${dir}?max_new_tokens=12&temperature=0.7`;
    const selfPlay = { pool: "shared", everyEpisodes: 2, trainer: { steps: 1, prompts: 2, groupSize: 2, maxNewTokens: 16, lr: 1e-3 } };
    const createRoom = async (i: number): Promise<string> => {
      const r = await json(`${servers[i]!.base}/api/rooms`, {
        method: "POST",
        headers: admin,
        body: JSON.stringify({ type: "simulation", options: { world: "tomi", seed: 60 + i, defaultAgent: spec, loop: true, tickMs: 0, pauseMs: 0, turnDeadlineMs: 20_000, selfPlay } }),
      });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      return r.json.roomId as string;
    };
    const ids = [await createRoom(0), await createRoom(1)];
    // One room in each process. Colyseus puts a room where there are fewest, and a process that has
    // just started may not be counted yet: a second room that landed beside the first is made again.
    const pids = await Promise.all(servers.map(pidOf));
    const owners = () => new RoomRegistry(store).list().map((r) => r.owner.pid);
    for (let tries = 0; new Set(owners()).size < 2 && tries < 10; tries++) {
      expect((await json(`${servers[0]!.base}/api/rooms/${ids[1]}`, { method: "DELETE", headers: admin })).status).toBeLessThan(300);
      await until(() => owners().length === 1, 10_000, "the room's removal");
      await new Promise((done) => setTimeout(done, 500));
      ids[1] = await createRoom(1);
    }
    expect(owners().sort()).toEqual([...pids].sort());

    // Exactly one trainer.
    await until(() => servers.some((s) => s.out().includes(TRAINS)), 30_000, "a trainer");
    const trainer = servers.find((s) => s.out().includes(TRAINS))!;
    const other = servers.find((s) => s !== trainer)!;
    const round1 = join(store, "selfplay", "shared", "round-1");
    await until(async () => (await json(`${trainer.base}/api/training`)).json.runs.some((r: any) => r.round === 1 && r.status === "done"), 240_000, "round 1");
    expect(other.out()).not.toContain(TRAINS);
    const run = (await json(`${trainer.base}/api/training`)).json.runs.find((r: any) => r.round === 1);
    expect(run.checkpoint).toBe(round1);
    // The rooms of both processes play round 1 (or a later one, by the time they are asked) from their next episode.
    for (const id of ids) await until(async () => (await roundsPlayed(other, id, spec)).every((r) => r >= 1), 120_000, `room ${id} playing round 1`);

    // The trainer killed: the other process takes the pool over (the lease expires) and trains round 2.
    trainer.child.kill("SIGKILL");
    await until(() => other.out().includes(TRAINS), 30_000, "the pool taken over");
    await until(async () => (await json(`${other.base}/api/training`)).json.runs.some((r: any) => r.round === 2 && r.status === "done"), 240_000, "round 2, by the survivor");
    // Both rooms (the dead trainer's recreated here) play the survivor's round.
    for (const id of ids) await until(async () => (await roundsPlayed(other, id, spec)).every((r) => r >= 2), 180_000, `room ${id} playing round 2`);
  }, 600_000);
});
