import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileLockTimeout, withFileLock } from "../../store/file-lock.js";
import { thisProcess } from "../../store/owner.js";

const lockIn = () => join(mkdtempSync(join(tmpdir(), "sw-lock-")), "db.json.lock");
const holder = (pid: number, host = hostname()) => JSON.stringify({ pid, host, since: new Date().toISOString() });
/** The pid of a process that has exited. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", "0"]).pid!;

describe("withFileLock", () => {
  it("runs the work holding the lock and removes it after, also when the work throws", async () => {
    const path = lockIn();
    expect(await withFileLock(path, () => (existsSync(path) ? "held" : "not held"))).toBe("held");
    expect(existsSync(path)).toBe(false);
    await expect(
      withFileLock(path, () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(existsSync(path)).toBe(false);
  });

  it("waits while a live process holds the lock, and says which when it gives up", async () => {
    const path = lockIn();
    writeFileSync(path, holder(process.pid));
    const err = await withFileLock(path, () => 1, { timeoutMs: 120 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileLockTimeout);
    expect((err as Error).message).toContain(path);
    expect((err as Error).message).toContain(`process ${process.pid} on ${hostname()}`);
    // Not broken: its owner is alive and it is fresh.
    expect(existsSync(path)).toBe(true);
  });

  it("never breaks the lock of a live process of this host, however old: it waits, then names it", async () => {
    const path = lockIn();
    writeFileSync(path, holder(process.pid));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(path, old, old);
    const err = await withFileLock(path, () => 1, { timeoutMs: 150, staleMs: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileLockTimeout);
    expect((err as Error).message).toContain(`process ${process.pid} on ${hostname()}`);
    expect(existsSync(path)).toBe(true);
  });

  it("goes on as soon as the holder lets go", async () => {
    const path = lockIn();
    writeFileSync(path, holder(process.pid));
    setTimeout(() => unlinkSync(path), 60);
    const started = Date.now();
    expect(await withFileLock(path, () => "mine", { timeoutMs: 5000 })).toBe("mine");
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });

  it("breaks at once the lock of a process of this host that has died", async () => {
    const path = lockIn();
    writeFileSync(path, holder(deadPid()));
    const started = Date.now();
    expect(await withFileLock(path, () => "mine", { timeoutMs: 5000 })).toBe("mine");
    expect(Date.now() - started).toBeLessThan(1000);
    expect(existsSync(path)).toBe(false);
  });

  it("breaks at once a lock left by an earlier process that had this one's pid", async () => {
    const path = lockIn();
    writeFileSync(path, JSON.stringify({ ...thisProcess(), started: thisProcess().started! - 60_000 }));
    expect(await withFileLock(path, () => "mine", { timeoutMs: 80 })).toBe("mine");
  });

  it("breaks a lock from another host only once it is older than staleMs", async () => {
    const path = lockIn();
    writeFileSync(path, holder(1, "another-host"));
    await expect(withFileLock(path, () => 1, { timeoutMs: 80, staleMs: 60_000 })).rejects.toThrow(/another-host/);
    const old = (Date.now() - 120_000) / 1000;
    utimesSync(path, old, old);
    expect(await withFileLock(path, () => "mine", { timeoutMs: 5000, staleMs: 60_000 })).toBe("mine");
  });

  it("breaks an empty lock file (its owner died creating it) only by its age", async () => {
    const path = lockIn();
    writeFileSync(path, "");
    await expect(withFileLock(path, () => 1, { timeoutMs: 80 })).rejects.toThrow(/an unknown process/);
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(path, old, old);
    expect(await withFileLock(path, () => "mine", { timeoutMs: 5000 })).toBe("mine");
  });

  it("gets past a breaker's guard left behind by a process that died", async () => {
    const path = lockIn();
    writeFileSync(path, holder(deadPid()));
    writeFileSync(`${path}.break`, holder(deadPid()));
    expect(await withFileLock(path, () => "mine", { timeoutMs: 5000 })).toBe("mine");
    expect(existsSync(`${path}.break`)).toBe(false);
  });

  it.runIf(existsSync("/proc/self/stat"))("breaks the lock of a stopped process of this host once older than staleMs, and only then; a running one's never", async () => {
    const path = lockIn();
    // A real process of this host holding the lock (as a server paused by SIGSTOP in a registry write).
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => child.once("spawn", r));
      writeFileSync(path, holder(child.pid!));
      const old = new Date(Date.now() - 60_000);
      utimesSync(path, old, old);
      // Running: kept, however old.
      await expect(withFileLock(path, () => 1, { timeoutMs: 150, staleMs: 10 })).rejects.toBeInstanceOf(FileLockTimeout);
      child.kill("SIGSTOP");
      const stopped = Date.now();
      while (!/\) [Tt] /.test(readFileSync(`/proc/${child.pid}/stat`, "utf8"))) {
        if (Date.now() - stopped > 5000) throw new Error("the child did not stop");
        await new Promise((r) => setTimeout(r, 10));
      }
      // Stopped, but its lock younger than staleMs: kept.
      writeFileSync(path, holder(child.pid!));
      await expect(withFileLock(path, () => 1, { timeoutMs: 150, staleMs: 60_000 })).rejects.toBeInstanceOf(FileLockTimeout);
      // Stopped and older: broken, and the waiter gets it.
      utimesSync(path, old, old);
      expect(await withFileLock(path, () => "mine", { timeoutMs: 2000, staleMs: 10 })).toBe("mine");
      expect(existsSync(path)).toBe(false);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("tells a holder whose lock was taken over while it worked (it was paused), so that its write is dropped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-lock-lost-"));
    const file = join(dir, "registry.json");
    const path = `${file}.lock`;
    const attempt = withFileLock(path, (lock) => {
      lock.replace(file, (tmp) => writeFileSync(tmp, "mine"));
      expect(readFileSync(file, "utf8")).toBe("mine");
      // Meanwhile (this holder paused past staleMs), a process of another host broke the lock and holds it.
      writeFileSync(path, holder(1, "another-host"));
      writeFileSync(file, "theirs");
      lock.replace(file, (tmp) => writeFileSync(tmp, "stale copy"));
    });
    await expect(attempt).rejects.toThrow(/lock was taken over while it held it/);
    expect(readFileSync(file, "utf8")).toBe("theirs");
    expect(readdirSync(dir).sort()).toEqual(["registry.json", "registry.json.lock"]);
    // The other holder's lock is left to it.
    expect(existsSync(path)).toBe(true);
  });
});
