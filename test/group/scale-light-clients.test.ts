/**
 * The scale script's light spectators (measurements/load-spectators.ts, docs/scale.md: the load
 * generator) time the same timesteps as the decoding ones: in a small group (2 processes, 4 rooms,
 * 5 spectators a room, 2 of them decoding), every light client's patch frames are matched to a
 * timestep a decoding client of its room saw (none unmatched), a light client records as many
 * timesteps as a decoding one, within the windows' edges, and no later. The built script is run as
 * users run it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";

const script = resolve(import.meta.dirname, "..", "..", "dist", "measurements", "scale-group.js");

it("light spectators are matched to the timesteps their room's decoding clients saw, as many for each client", () => {
  const out = mkdtempSync(join(tmpdir(), "sw-scale-light-"));
  try {
    const json = join(out, "scale.json");
    const args = ["--processes", "2", "--spectators-per-process", "10", "--rooms-per-process", "2", "--decoding-per-room", "2", "--seconds", "4", "--tick-ms", "200", "--no-kill", "--json", json];
    const r = spawnSync(process.execPath, [script, ...args], { encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const row = (JSON.parse(readFileSync(json, "utf8")) as { rows: Record<string, any>[] }).rows[0]!;
    expect(row.spectatorsConnected).toBe(20);
    expect(row.decodingClients).toBe(8);
    expect(row.lightFramesUnmatched).toBe(0);
    const perDecoding = row.decodingClientsPatchMs.n / 8;
    const perLight = row.lightClientsPatchMs.n / 12;
    // 4 s at a timestep every 200 ms: about 20 each (fewer on a loaded machine, the same for both kinds).
    expect(perDecoding).toBeGreaterThan(5);
    expect(Math.abs(perLight - perDecoding)).toBeLessThanOrEqual(Math.max(2, perDecoding * 0.15));
    // Timed at arrival, in the same thread as the room's decoding clients: never later than them by more than noise.
    expect(row.lightClientsPatchMs.p50).toBeGreaterThanOrEqual(0);
    expect(row.lightClientsPatchMs.p50).toBeLessThanOrEqual(row.decodingClientsPatchMs.p50 + 20);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 150_000);
