/**
 * Rooms that outlive their server: a room created through the API is written to the store's room
 * registry (store/room-registry.ts) with its resolved options, its run and its creator's tokens;
 * a simulation room also notes each episode as it starts. When a server starts, it recreates the
 * rooms of a server that is gone (killed, crashed, stopped), under their ids: a benchmark room
 * goes on with its run where its log ends, a simulation room plays its interrupted episode again
 * (the next one when its log has that one already: EpisodeRoom.takeUp).
 *
 * A room leaves the registry when it ends by itself (its run done and its linger over) or is
 * stopped by an admin; a server that is shutting down leaves its rooms registered, to come back.
 */
import { randomBytes } from "node:crypto";
import { ownerGone, ownerKey, thisProcess, type Owner } from "../store/owner.js";
import { RoomRegistry, type RoomEntry } from "../store/room-registry.js";
import { PlaceLost } from "../store/write-fence.js";

/** The key of a restored room's options that names what it restores (removed before its options are read). */
const RESTORE_KEY = "__socialworldRestore";

/** What a room recreated after a restart takes over from the room it replaces. */
export interface RestoreInfo {
  readonly roomId: string;
  readonly runId?: string;
  readonly secrets?: RoomEntry["secrets"];
  readonly episode?: RoomEntry["episode"];
}

/** Creates a room again from its saved options, under `roomId` (its restore key among the options names it). */
export type RecreateRoom = (type: RoomEntry["type"], options: Record<string, unknown>, roomId: string) => Promise<unknown>;

/**
 * The processes of a group that died, as the group knows them beyond what a pid tells (their
 * heartbeat in Redis, group/process-heartbeat.ts): those of other machines, where a pid tells
 * nothing, and those of any machine, this one included, that stopped answering (paused) while
 * their pid lives on; and which of them this process takes over.
 */
export interface DeadProcesses {
  /** Of these owners, the dead ones whose rooms this process takes over (one taker each). */
  takeOver(owners: readonly Owner[]): Promise<Owner[]>;
  /** Their rooms are claimed: called before they are recreated (to drop what the dead process left listed). */
  tookOver(owners: readonly Owner[]): Promise<void>;
}

export class PersistedRooms {
  readonly registry: RoomRegistry;
  private readonly tracked = new Set<string>();
  private readonly waiting = new Map<string, RestoreInfo>();
  /** Why a restored room failed to be created, as the room itself saw it (matchmaking passes on only its message). */
  private readonly failures = new Map<string, unknown>();
  private closing = false;
  /** Registry writes, one after another, in the order they were asked for. */
  private chain: Promise<void> = Promise.resolve();

  constructor(storeRoot: string) {
    this.registry = new RoomRegistry(storeRoot);
  }

  /** A room the API created: it comes back after a restart. */
  add(entry: Omit<RoomEntry, "owner">): Promise<void> {
    this.tracked.add(entry.roomId);
    return this.enqueue(() => this.registry.put(entry));
  }

  /** A simulation room started episode `number` with `seed` (a restart plays it again). */
  episode(roomId: string, number: number, seed: number): void {
    if (this.tracked.has(roomId)) void this.enqueue(() => this.registry.update(roomId, { episode: { number, seed } }));
  }

  /** The room is over (or was stopped by an admin): it does not come back. Ignored while the server shuts down. */
  forget(roomId: string): void {
    if (this.closing || !this.tracked.delete(roomId)) return;
    void this.enqueue(() => this.registry.remove(roomId));
  }

  /**
   * The process that now owns a room this process plays, as the registry says (its id: ownerKey),
   * or undefined. Only a process that took this one over for dead writes another owner into an
   * entry of this process's (claimOrphans), so this is the store's record that it was declared dead,
   * which a Redis restarted without persistence does not lose (group/process-heartbeat.ts).
   */
  takenBy(): string | undefined {
    if (!this.tracked.size) return undefined;
    const me = ownerKey(thisProcess());
    const entry = this.registry.list().find((e) => this.tracked.has(e.roomId) && ownerKey(e.owner) !== me);
    return entry && ownerKey(entry.owner);
  }

  /** The server is stopping: its rooms stay registered. Resolves when every write is done. */
  close(): Promise<void> {
    this.closing = true;
    return this.chain;
  }

  /**
   * Recreates the rooms whose server is gone, one by one, through `create` (matchmaking); a room
   * that cannot be recreated (its data file deleted since) is said so and dropped from the registry.
   * One that failed for a reason that passes (restoreFailed) stays registered, to this process.
   */
  async restore(create: RecreateRoom, gone: (owner: Owner) => boolean = ownerGone, claimed?: (owners: Owner[]) => Promise<void>): Promise<string[]> {
    const restored: string[] = [];
    const entries = await this.registry.claimOrphans(gone);
    if (claimed && entries.length) await claimed(entries.map((e) => e.owner));
    for (const e of entries) {
      const nonce = randomBytes(18).toString("base64url");
      this.waiting.set(nonce, { roomId: e.roomId, ...(e.runId ? { runId: e.runId } : {}), ...(e.secrets ? { secrets: e.secrets } : {}), ...(e.episode ? { episode: e.episode } : {}) });
      try {
        this.tracked.add(e.roomId);
        await create(e.type, { ...e.options, [RESTORE_KEY]: nonce }, e.roomId);
        restored.push(e.roomId);
      } catch (err) {
        this.tracked.delete(e.roomId);
        const cause = this.failures.get(e.roomId) ?? err;
        if (passes(cause)) {
          console.error(`[rooms] room ${e.roomId} (${e.type}) could not be restored now: ${(cause as Error).message}; it stays in ${this.registry.path}, and comes back when this process stops (in another process of its group) or the next server starts on this store`);
        } else {
          console.error(`[rooms] room ${e.roomId} (${e.type}) could not be restored: ${(err as Error).message}; it is removed from ${this.registry.path}`);
          await this.enqueue(() => this.registry.remove(e.roomId));
        }
      } finally {
        this.waiting.delete(nonce);
        this.failures.delete(e.roomId);
      }
    }
    return restored;
  }

  /**
   * In a group of processes on one store: every `everyMs`, the rooms of a process that died are
   * claimed (by one process of the group: the registry's lock decides) and recreated here. A
   * process is dead when `dead` says so (its heartbeat stopped), or at once when it ran on
   * this machine and its pid is gone. Returns the function that stops watching.
   */
  watchOrphans(create: RecreateRoom, everyMs: number, restored: (ids: string[]) => void, dead?: DeadProcesses): () => void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || this.closing) return;
      busy = true;
      void (async () => {
        try {
          const owners = this.registry.list().map((e) => e.owner);
          const taken = new Set((dead ? await dead.takeOver(owners) : []).map(ownerKey));
          const gone = (o: Owner) => taken.has(ownerKey(o)) || ownerGone(o);
          if (!owners.some(gone)) return;
          const ids = await this.restore(create, gone, dead ? (claimed) => dead.tookOver(claimed) : undefined);
          if (ids.length) restored(ids);
        } catch (err) {
          console.error(`[rooms] ${this.registry.path}: ${(err as Error).message}`);
        } finally {
          busy = false;
        }
      })();
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** A restored room failed to be created, with `err`: said by the room, whose error matchmaking passes on as a message. */
  restoreFailed(info: RestoreInfo, err: unknown): void {
    this.failures.set(info.roomId, err);
  }

  /** A room being created: what it restores, if anything (the key is taken out of its options). */
  claim(raw: unknown): RestoreInfo | undefined {
    if (raw === null || typeof raw !== "object" || !(RESTORE_KEY in raw)) return undefined;
    const options = raw as Record<string, unknown>;
    const nonce = options[RESTORE_KEY];
    delete options[RESTORE_KEY];
    return typeof nonce === "string" ? this.waiting.get(nonce) : undefined;
  }

  private enqueue(write: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(write).catch((err: unknown) => console.error(`[rooms] ${this.registry.path}: ${(err as Error).message}`));
    return this.chain;
  }
}

/**
 * A restore that failed for a reason that passes, the room's data being whole: this process not
 * known to hold its place in its group (it may have been declared dead: the room's next home
 * restores it), or a full disk. Its registry entry is kept rather than the room lost.
 */
function passes(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return err instanceof PlaceLost || code === "ENOSPC" || code === "EDQUOT";
}
