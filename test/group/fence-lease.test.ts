/**
 * The write lease of a group's fence (server/group/fence.ts) as its heartbeat renews it, played
 * here without Redis: a renewal whose heartbeat was sent so long ago that the lease it grants is
 * already over (the reply came late: an event loop blocked, a Redis away for 8-10 s) wakes no write
 * waiting for the lease, and asks for another beat at once; the next renewal that holds lets them
 * write. A wait ends: refused when the process is declared dead, when its heartbeat stops, and,
 * once the server is stopping, after the time it was given.
 */
import { describe, expect, it } from "vitest";
import { Fence } from "../../server/group/fence.js";
import { tombstoneKey } from "../../server/group/process-heartbeat.js";
import { clocksNow } from "../../store/write-fence.js";

/** The clocks as they were `ms` ago (when a heartbeat answered only now was sent). */
const ago = (ms: number) => ({ mono: process.hrtime.bigint() - BigInt(ms) * 1_000_000n, wall: Date.now() - ms });
/** Lets pending promise callbacks and timers of 0 ms run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

/** A fence whose lease lapsed, a write waiting on it (it writes, checking the lease, once held), and how often a beat was asked for. */
async function lapsedWithAWrite() {
  const fence = new Fence(tombstoneKey("machine-a/1/1"));
  const beats = { asked: 0 };
  fence.onLapse(() => beats.asked++);
  fence.renewed(clocksNow(), 60_000);
  fence.renewed(ago(10_000), 8000);
  expect(fence.holds()).toBe(false);
  const write = { state: "waiting" };
  const done = fence.held().then(
    () => {
      fence.check("a log");
      write.state = "written";
    },
    (err: Error) => (write.state = `${err.name}: ${err.message}`),
  );
  await settle();
  return { fence, beats, write, done };
}

describe("a group's write lease", () => {
  it("a late heartbeat's renewal, already over, wakes no waiting write and asks for a beat at once; the next one that holds lets it write", async () => {
    const { fence, beats, write, done } = await lapsedWithAWrite();
    expect(write.state).toBe("waiting");
    const asked = beats.asked;
    expect(asked).toBeGreaterThan(0);
    // The beat in flight through the block is answered now: sent 9 s ago, its 8 s are over.
    fence.renewed(ago(9000), 8000);
    await settle();
    expect(write.state).toBe("waiting");
    expect(beats.asked).toBe(asked + 1);
    // The beat sent at once is answered.
    fence.renewed(clocksNow(), 8000);
    await done;
    expect(write.state).toBe("written");
  });

  it("a waiting write is refused when the process is declared dead, and when its heartbeat stops", async () => {
    const dead = await lapsedWithAWrite();
    dead.fence.trip("machine-b/2/2");
    await dead.done;
    expect(dead.write.state).toMatch(/^PlaceLost: .*declared dead by its group; its rooms are recreated by machine-b\/2\/2/);

    const stopped = await lapsedWithAWrite();
    stopped.fence.stopped();
    await stopped.done;
    expect(stopped.write.state).toMatch(/^PlaceLost: .*its heartbeat stopped/);
    // No write waits any more; one while the lease holds still passes.
    await expect(stopped.fence.held()).rejects.toThrow(/its heartbeat stopped/);
    stopped.fence.renewed(clocksNow(), 8000);
    await stopped.fence.held();
  });

  it("once the server is stopping, writes wait for the lease only for the time it was given, in all", async () => {
    const { fence, write, done } = await lapsedWithAWrite();
    fence.stopping(50);
    const later = fence.held().then(
      () => "written",
      (err: Error) => err.message,
    );
    await done;
    expect(write.state).toMatch(/^PlaceLost: .*the server is stopping, and no heartbeat renewed its lease in the time it was given/);
    expect(await later).toMatch(/the server is stopping/);
    // Past that time, a write that finds the lease lapsed is refused at once (a shutdown's writes do not wait one after another).
    await expect(fence.held()).rejects.toThrow(/the server is stopping/);
    // Renewed meanwhile, writes go on at once.
    fence.renewed(clocksNow(), 8000);
    await fence.held();
  });
});
