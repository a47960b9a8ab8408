/**
 * The process that owns something in the store (a run in progress, a lock): its pid and host. A
 * pid says whether the process still exists only on its own host; elsewhere nobody can tell.
 */
import { hostname } from "node:os";
import { z } from "zod";

export const OwnerSchema = z.object({ pid: z.number().int(), host: z.string() });
export type Owner = z.infer<typeof OwnerSchema>;

export function thisProcess(): Owner {
  return { pid: process.pid, host: hostname() };
}

/** True only when the owner ran on this host and no longer exists. */
export function ownerGone(owner: Owner): boolean {
  if (owner.host !== hostname()) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code !== "EPERM";
  }
}
