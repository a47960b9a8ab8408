/**
 * A lock file, so that processes sharing a store (the server, benchmarks run side by side in
 * several terminals) change its registry one at a time: each reads the registry, changes it and
 * writes it back while holding the lock, so none overwrites another's change with an old copy.
 *
 * The lock is a file created with O_EXCL, holding its owner's pid and host. The work done under it
 * is synchronous and takes milliseconds, so a lock that stays is one whose owner died: it is
 * broken at once when its owner was a process of this host that no longer exists. A running
 * process of this host keeps its lock however long it takes (a stuck one ends the wait in
 * FileLockTimeout, which names it). A lock of another host, or one whose owner cannot be read, is
 * broken once it is older than `staleMs` (a store on a disk shared between hosts: nobody here can
 * see that process); so is the lock of a process of this host that is stopped (SIGSTOP): it will
 * not let go before someone continues it, and a group of server processes would wait for it to
 * claim its rooms, which it was declared dead for. On waking it finds the lock taken (FileLockLost,
 * as a paused process of another host does).
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { withPath } from "./io-error.js";
import { OwnerSchema, ownerGone, ownerStopped, thisProcess, type Owner } from "./owner.js";
import { replaceFile } from "./write-atomic.js";
import { writesHeld } from "./write-fence.js";

export interface FileLockOptions {
  /** Give up waiting for another process's lock after this long (default 30 s). */
  readonly timeoutMs?: number;
  /** A lock older than this is taken to be left by a dead process (default 10 s). */
  readonly staleMs?: number;
}

export class FileLockTimeout extends Error {
  constructor(
    readonly path: string,
    holder: string,
    waitedMs: number,
  ) {
    super(
      `${path}: still locked after ${Math.round(waitedMs)} ms by ${holder || "an unknown process"}; ` +
        "if no socialworld process is using this store, delete the file",
    );
    this.name = "FileLockTimeout";
  }
}


/**
 * The lock was broken while its holder worked under it: the holder was paused (SIGSTOP, a frozen
 * VM) past `staleMs`, and a process of another host took the lock. What it was about to write is
 * older than what the other wrote since, and must not replace it.
 */
export class FileLockLost extends Error {
  constructor(readonly path: string) {
    super(`${path}: this process's lock was taken over while it held it (paused longer than the lock lives); its change is dropped`);
    this.name = "FileLockLost";
  }
}

/** The lock being held, as `work` sees it. */
export interface HeldLock {
  /**
   * Replaces `path` whole (write-atomic.ts) with what `write` puts in the temporary file, if this
   * process still holds the lock when the new file is about to take the old one's place; otherwise
   * FileLockLost, and the file stays as the lock's new holder left it. Every file kept under a lock
   * is written through here, since the lock is only checked here.
   */
  replace(path: string, write: (tmp: string) => void): void;
}

/**
 * Runs `work` holding the lock at `path`, and releases it. `work` is synchronous on purpose: with
 * no await inside, the lock is held for as short a time as possible, and two callers in one
 * process cannot interleave either.
 */
export async function withFileLock<T>(path: string, work: (lock: HeldLock) => T, opts: FileLockOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const staleMs = opts.staleMs ?? 10_000;
  // A process that may have been declared dead by its group takes no lock of the store it shares (write-fence.ts).
  await writesHeld();
  const started = Date.now();
  let mine: string | undefined;
  for (let attempt = 0; ; attempt++) {
    mine = tryLock(path);
    if (mine !== undefined) break;
    const holder = inspect(path, staleMs);
    if (holder === "gone") continue;
    if (holder === "stale" && breakStale(path, staleMs)) continue;
    const waited = Date.now() - started;
    if (waited >= timeoutMs) throw new FileLockTimeout(path, holder === "stale" ? "a process that died" : holder, waited);
    // 1, 2, 4 ... 50 ms: a held lock is released within milliseconds.
    await sleep(Math.min(50, 2 ** Math.min(attempt, 6)));
  }
  const held = mine;
  try {
    return work({
      replace: (file, write) =>
        replaceFile(file, write, () => {
          if (readIfPresent(path) !== held) throw new FileLockLost(path);
        }),
    });
  } finally {
    // Ours unless it was judged stale and taken over meanwhile: then it is someone else's now.
    if (readIfPresent(path) === mine) removeIfPresent(path);
  }
}

/**
 * Removes a dead owner's lock. Two waiters may judge it stale at once; if each simply deleted it,
 * the slower one could delete the lock the faster one had just created. So breaking takes a
 * second lock, and the lock is judged again under it: a lock created meanwhile is never stale.
 * False when another waiter is breaking it now.
 */
function breakStale(path: string, staleMs: number): boolean {
  const guard = `${path}.break`;
  if (tryLock(guard) === undefined) {
    // A guard is held for microseconds; an old one was left by a process that died holding it.
    if (inspect(guard, staleMs) === "stale") removeIfPresent(guard);
    return false;
  }
  try {
    if (inspect(path, staleMs) === "stale") removeIfPresent(path);
  } finally {
    removeIfPresent(guard);
  }
  return true;
}

/** Creates the lock file; what it wrote there (to know it as its own), or undefined if it exists. */
function tryLock(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "wx");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw err;
  }
  const text = JSON.stringify({ ...thisProcess(), since: new Date().toISOString() });
  try {
    writeSync(fd, text);
  } catch (err) {
    // An empty lock file would hold the lock for nobody (a full disk): take it back.
    closeSync(fd);
    unlinkSync(path);
    throw withPath(err, path);
  }
  closeSync(fd);
  return text;
}

/** The file's text, or undefined when there is no such file. */
export function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

/** "gone" (released meanwhile), "stale" (its owner is dead), or who holds it, for the message. */
function inspect(path: string, staleMs: number): "gone" | "stale" | string {
  const mtimeMs = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
  const text = readIfPresent(path);
  if (mtimeMs === undefined || text === undefined) return "gone";
  // An empty file is a lock being written this instant (or left by a crash right after creating
  // it): only its age can tell.
  const holder = parseHolder(text);
  if (holder && ownerGone(holder)) return "stale";
  const running = holder !== undefined && holder.host === thisProcess().host && !ownerStopped(holder);
  if (!running && Date.now() - mtimeMs > staleMs) return "stale";
  return holder ? `process ${holder.pid} on ${holder.host}` : "";
}

function parseHolder(text: string): Owner | undefined {
  try {
    const parsed = OwnerSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

