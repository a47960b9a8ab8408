/**
 * The room registry changes only this process's entries: a process paused long enough to be
 * declared dead, whose rooms another process claimed and re-created, must not write its old
 * episode over theirs or remove them when it wakes (issue 32's fence covers Redis; this is the
 * store's side).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RoomRegistry } from "../../store/room-registry.js";
import { thisProcess } from "../../store/owner.js";
import { tempDir } from "../policy/fixtures.js";

const entry = (roomId: string) => ({ roomId, type: "simulation" as const, options: { world: "tomi" }, createdAt: "2026-11-27T00:00:00.000Z" });

describe("the room registry", () => {
  it("updates and removes this process's entries, and leaves another process's as they are", async () => {
    const reg = new RoomRegistry(tempDir("sw-rooms-"));
    await reg.put(entry("mine"));
    await reg.put(entry("taken"));
    // Another process claimed "taken" (as claimOrphans does when this one is declared dead).
    const other = { ...thisProcess(), pid: thisProcess().pid + 1, host: "elsewhere" };
    const file = JSON.parse(readFileSync(reg.path, "utf8")) as { rooms: { roomId: string; owner: unknown; episode?: unknown }[] };
    file.rooms.find((r) => r.roomId === "taken")!.owner = other;
    file.rooms.find((r) => r.roomId === "taken")!.episode = { number: 7, seed: 70 };
    writeFileSync(reg.path, JSON.stringify(file));

    await reg.update("mine", { episode: { number: 2, seed: 20 } });
    await reg.update("taken", { episode: { number: 3, seed: 30 } });
    await reg.remove("taken");
    const byId = new Map(reg.list().map((r) => [r.roomId, r]));
    expect(byId.get("mine")!.episode).toEqual({ number: 2, seed: 20 });
    expect(byId.get("taken")).toMatchObject({ owner: other, episode: { number: 7, seed: 70 } });

    await reg.remove("mine");
    expect(reg.list().map((r) => r.roomId)).toEqual(["taken"]);
  });
});
