/**
 * Reconnection with the reconnection token, against a server in a process of its own: the test
 * harness defines a global WebSocket for its SDK clients, which hid that Node 20 has none and that
 * Colyseus needs one to take a client back (every reconnection failed and lost its seat).
 * Also what becomes of the seat when its person does not come back in time.
 */
import { describe, expect, it } from "vitest";
import { seated } from "./child-server.js";
import { connect, until } from "./raw-client.js";

describe("reconnecting to a seat (server in its own process)", () => {
  it("takes the client back to its seat with its reconnection token", async () => {
    const { seat, url, first } = await seated(20);
    expect(await seat()).toEqual({ agent: expect.any(String), controller: expect.any(String), human: true, occupied: true, connected: true });

    first.ws.terminate();
    const again = connect(`${url}&reconnectionToken=${first.seen.token}`);
    await until(() => again.seen.token !== "" || again.seen.closed !== undefined, 10_000, "the reconnection");
    expect(again.seen.errors).toEqual([]);
    expect(again.seen.closed).toBeUndefined();
    expect(await seat()).toMatchObject({ occupied: true, connected: true });
    again.ws.close();
  }, 30_000);

  it("releases the seat when the reconnection window is over, and refuses the token after it", async () => {
    const { seat, url, first } = await seated(2);
    first.ws.terminate();
    // Read in the same answer that saw the drop: the seat is still held then.
    let dropped: { occupied: boolean; connected: boolean } | undefined;
    await until(async () => !(dropped = await seat()).connected, 10_000, "the server to see the connection drop");
    expect(dropped!.occupied).toBe(true);
    await until(async () => !(await seat()).occupied, 10_000, "the seat to be released");
    const late = connect(`${url}&reconnectionToken=${first.seen.token}`);
    await until(() => late.seen.closed !== undefined || late.seen.errors.length > 0, 10_000, "the refusal");
    expect(late.seen.token).toBe("");
  }, 30_000);
});
