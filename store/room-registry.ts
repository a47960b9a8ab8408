/**
 * The rooms a server was asked to run (`<store>/rooms.json`), so that a server killed without
 * warning (kill -9, a power cut) brings them back when it starts again: each with its options,
 * its run, the tokens its creator was given, and how far it had got.
 *
 * Written like the run registry: every change under the store's lock file on a fresh read, the
 * file replaced whole (write-atomic.ts), so a crash mid-write leaves the old file or the new one.
 * A server restores only rooms whose owner process is gone (two servers on one store never run
 * one room twice).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { DataError } from "../worlds/core/errors.js";
import { readIfPresent, withFileLock } from "./file-lock.js";
import { OwnerSchema, ownerGone, ownerKey, thisProcess, type Owner } from "./owner.js";

export const ROOMS_FILE = "rooms.json";

export const RoomEntrySchema = z.object({
  roomId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  type: z.enum(["simulation", "benchmark", "social"]),
  /** The room's options as it resolved them (a seed it drew is written out, so a restart plays the same). */
  options: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  runId: z.string().optional(),
  /** A private room's tokens, as its creator was given them (they keep working after a restart). */
  secrets: z
    .object({
      spectatorToken: z.string().optional(),
      seatTokens: z.array(z.object({ index: z.number().int().min(0), token: z.string() })),
    })
    .optional(),
  /** A simulation room's episode in progress: a restart plays it again from its start. */
  episode: z.object({ number: z.number().int().min(1), seed: z.number().int().min(0) }).optional(),
  owner: OwnerSchema,
});
export type RoomEntry = z.infer<typeof RoomEntrySchema>;

const FileSchema = z.object({ version: z.literal(1), rooms: z.array(RoomEntrySchema) });

export class RoomRegistry {
  readonly path: string;

  constructor(storeRoot: string) {
    this.path = join(storeRoot, ROOMS_FILE);
  }

  /** Every registered room; a damaged file is bad input naming it. */
  list(): RoomEntry[] {
    const text = readIfPresent(this.path);
    if (text === undefined) return [];
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new DataError(this.path, {}, `not valid JSON: ${(err as Error).message}`);
    }
    const parsed = FileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DataError(this.path, { field: issue.path.join(".") || "(root)" }, issue.message);
    }
    return parsed.data.rooms;
  }

  /**
   * Rooms whose server is gone: this process takes them over (they are its to restore). `gone`
   * says which owners are gone: by default those of this host whose pid no longer exists; a group
   * of processes adds those of other hosts that stopped their heartbeat (server/group/). Each is
   * returned as it was, naming the owner that is gone.
   */
  claimOrphans(gone: (owner: Owner) => boolean = ownerGone): Promise<RoomEntry[]> {
    return this.change((rooms) => {
      const me = thisProcess();
      const claimed: RoomEntry[] = [];
      for (let i = 0; i < rooms.length; i++) {
        if (!gone(rooms[i]!.owner)) continue;
        claimed.push(rooms[i]!);
        rooms[i] = { ...rooms[i]!, owner: me };
      }
      return claimed;
    });
  }

  put(entry: Omit<RoomEntry, "owner">): Promise<void> {
    return this.change((rooms) => {
      const i = rooms.findIndex((r) => r.roomId === entry.roomId);
      const full = { ...entry, owner: thisProcess() };
      if (i < 0) rooms.push(full);
      else rooms[i] = full;
    });
  }

  /**
   * Changes this process's entry for the room. An entry another process has claimed is left as it
   * is: a process paused long enough to be declared dead, its rooms re-created elsewhere, must not
   * write its old episode over theirs when it wakes (nor remove a room that now lives there).
   */
  update(roomId: string, patch: Partial<Pick<RoomEntry, "episode" | "runId">>): Promise<void> {
    return this.change((rooms) => {
      const i = this.mine(rooms, roomId);
      if (i >= 0) rooms[i] = { ...rooms[i]!, ...patch };
    });
  }

  /** Removes this process's entry for the room (see update: another process's is left alone). */
  remove(roomId: string): Promise<void> {
    return this.change((rooms) => {
      const i = this.mine(rooms, roomId);
      if (i >= 0) rooms.splice(i, 1);
    });
  }

  private mine(rooms: readonly RoomEntry[], roomId: string): number {
    const me = ownerKey(thisProcess());
    return rooms.findIndex((r) => r.roomId === roomId && ownerKey(r.owner) === me);
  }

  private change<T>(fn: (rooms: RoomEntry[]) => T): Promise<T> {
    return withFileLock(`${this.path}.lock`, (lock) => {
      const rooms = this.list();
      const out = fn(rooms);
      // Tokens are in it: readable by the server's user only.
      const text = JSON.stringify({ version: 1, rooms }, null, 2) + "\n";
      // A process paused while it held the lock (another machine took the lock, and maybe its rooms,
      // meanwhile) must not put back what it read before.
      lock.replace(this.path, (tmp) => writeFileSync(tmp, text, { mode: 0o600 }));
      return out;
    });
  }
}
