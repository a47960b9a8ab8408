/**
 * The process that owns something in the store (a run in progress, a lock): its pid, host and
 * start time. A pid says whether the process still exists only on its own host; elsewhere nobody
 * can tell. The start time tells this process from an earlier one that had its pid (a server
 * restarted in a container is often pid 1 again).
 *
 * The host is the machine's name, or SOCIALWORLD_HOST_ID where machines sharing a store have the
 * same name (containers started from one image): two machines must never share an id, since a
 * pid is checked only on its own host.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { z } from "zod";

export const OwnerSchema = z.object({
  pid: z.number().int(),
  host: z.string(),
  /** When the process started (ms since the epoch). */
  started: z.number().optional(),
});
export type Owner = z.infer<typeof OwnerSchema>;

// From the process's uptime, not performance.timeOrigin: a worker thread has a time origin of its
// own, and must still recognise its process. Two readings differ by a millisecond or so.
const started = Math.round(Date.now() - process.uptime() * 1000);
const SAME_START_MS = 1000;
const host = process.env.SOCIALWORLD_HOST_ID || hostname();

/** This machine, as owners name it. */
export function thisHost(): string {
  return host;
}

export function thisProcess(): Owner {
  return { pid: process.pid, host, started };
}

/** One string per process, for keys (host, pid and start time). */
export function ownerKey(owner: Owner): string {
  return `${owner.host}/${owner.pid}/${owner.started ?? 0}`;
}

/** True only when the owner ran on this host and no longer exists. */
export function ownerGone(owner: Owner): boolean {
  if (owner.host !== host) return false;
  if (owner.pid === process.pid) return owner.started !== undefined && Math.abs(owner.started - started) > SAME_START_MS;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code !== "EPERM";
  }
}

/**
 * True when the owner is a process of this host that exists but is stopped (SIGSTOP, a debugger,
 * a job suspended by ^Z): it runs nothing until someone continues it. Read from Linux's
 * /proc/PID/stat (the state after the command's name, which may itself hold spaces and
 * parentheses); false where there is no /proc, or the process is gone or another host's.
 */
export function ownerStopped(owner: Owner): boolean {
  if (owner.host !== host || owner.pid === process.pid) return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${owner.pid}/stat`, "utf8");
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state === "T" || state === "t";
}
