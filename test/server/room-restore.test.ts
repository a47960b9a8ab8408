/**
 * A room that fails to be recreated after its server died (server/room-registry.ts) leaves the
 * room registry only for a reason that lasts (its options or data no longer make a room): one
 * that failed because its process is not known to hold its place in its group (PlaceLost: it may
 * have been declared dead, and the room's next home restores it) or because the disk is full
 * stays registered, and comes back at the next restore.
 */
import { describe, expect, it } from "vitest";
import { PersistedRooms, type RecreateRoom } from "../../server/room-registry.js";
import { PlaceLost } from "../../store/write-fence.js";
import { tempDir } from "../policy/fixtures.js";

const entry = (roomId: string) => ({ roomId, type: "simulation" as const, options: { world: "tomi" }, createdAt: "2026-11-27T00:00:00.000Z" });

describe("restoring the rooms of a server that died", () => {
  it("keeps a room whose re-creation failed for a reason that passes, and drops one that cannot be made", async () => {
    const store = tempDir("sw-restore-");
    const persisted = new PersistedRooms(store);
    for (const id of ["lease-lapsed", "disk-full", "data-gone", "fine"]) await persisted.add(entry(id));
    const causes: Record<string, Error | undefined> = {
      "lease-lapsed": new PlaceLost("episodes.jsonl", "no heartbeat of this process was answered within its lease"),
      "disk-full": Object.assign(new Error("ENOSPC: no space left on device, write (episodes.jsonl)"), { code: "ENOSPC" }),
      "data-gone": Object.assign(new Error("ENOENT: no such file or directory (tomi.jsonl)"), { code: "ENOENT" }),
    };
    // As a room does: it tells the registry what failed, and matchmaking passes on only a message.
    const failing: RecreateRoom = async (_type, options, roomId) => {
      const info = persisted.claim(options)!;
      expect(info.roomId).toBe(roomId);
      const cause = causes[roomId];
      if (!cause) return;
      persisted.restoreFailed(info, cause);
      throw new Error(cause.message);
    };
    const errors: string[] = [];
    const error = console.error;
    console.error = (msg: string) => errors.push(msg);
    try {
      // Every owner gone (this process's entries included, as after its restart).
      expect(await persisted.restore(failing, () => true)).toEqual(["fine"]);
    } finally {
      console.error = error;
    }
    await persisted.close();
    expect(persisted.registry.list().map((e) => e.roomId).sort()).toEqual(["disk-full", "fine", "lease-lapsed"]);
    expect(errors.find((m) => m.includes("lease-lapsed"))).toMatch(/could not be restored now: .*it stays in/);
    expect(errors.find((m) => m.includes("data-gone"))).toMatch(/it is removed from/);

    // The next restore (the next server on this store, or this process's successor in its group) brings them back.
    const again = new PersistedRooms(store);
    const ok: RecreateRoom = async (_type, options) => void again.claim(options);
    expect((await again.restore(ok, () => true)).sort()).toEqual(["disk-full", "fine", "lease-lapsed"]);
  });
});
