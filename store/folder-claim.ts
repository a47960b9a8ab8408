/**
 * A folder that one process writes into for a long time (a training run's OUT: checkpoints, step
 * log, final model), claimed with a file naming that process. A second run started on the same
 * folder by mistake stops at once instead of mixing its checkpoints and log lines with the
 * first's. A claim whose owner is gone is taken over: at once when the owner was a process of
 * this host, and otherwise when the owner, which touches the file every minute while it runs,
 * has not done so for ten minutes (a run on another machine sharing the disk).
 */
import { rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readIfPresent, withFileLock } from "./file-lock.js";
import { OwnerSchema, ownerGone, thisProcess, type Owner } from "./owner.js";

export const CLAIM_FILE = ".socialworld-owner.json";
const HEARTBEAT_MS = 60_000;
const STALE_MS = 10 * 60_000;

export class FolderInUse extends Error {
  constructor(
    readonly dir: string,
    readonly owner: Owner,
    since: string,
  ) {
    super(`${dir} is in use by process ${owner.pid} on ${owner.host} (since ${since}); wait for that run to end or stop it`);
    this.name = "FolderInUse";
  }
}

export interface FolderClaim {
  /** Gives the folder up (the run is over). */
  release(): void;
}

/** Claims `dir` (which must exist) for this process, or throws FolderInUse. */
export async function claimFolder(dir: string): Promise<FolderClaim> {
  const path = join(dir, CLAIM_FILE);
  const mine = JSON.stringify({ ...thisProcess(), since: new Date().toISOString() });
  // The check and the write are one step for every claimer: two runs started together cannot both win.
  await withFileLock(`${path}.lock`, (lock) => {
    const held = readClaim(path);
    if (held && !gone(held.owner, path)) throw new FolderInUse(dir, held.owner, held.since);
    lock.replace(path, (tmp) => writeFileSync(tmp, mine));
  });
  const heartbeat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // The folder went away; the run will find out when it next writes there.
    }
  }, HEARTBEAT_MS).unref();
  return {
    release() {
      clearInterval(heartbeat);
      if (readIfPresent(path) === mine) rmSync(path, { force: true });
    },
  };
}

function gone(owner: Owner, path: string): boolean {
  if (ownerGone(owner)) return true;
  return owner.host !== thisProcess().host && Date.now() - statSync(path).mtimeMs > STALE_MS;
}

function readClaim(path: string): { owner: Owner; since: string } | undefined {
  const text = readIfPresent(path);
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as { since?: unknown };
    const owner = OwnerSchema.parse(value);
    return { owner, since: typeof value.since === "string" ? value.since : "?" };
  } catch {
    // Not a claim this code wrote (it writes whole files): nobody's.
    return undefined;
  }
}
