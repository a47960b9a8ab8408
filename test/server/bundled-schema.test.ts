/**
 * The command line's server (bin/socialworld.js, the CommonJS bundle of cli/bundle.mjs) encodes
 * rooms with the @colyseus/schema that its rooms configure. @colyseus/core loads as an ES module
 * even under require(), and a plain require() of @colyseus/schema loaded its CommonJS build
 * beside it: Encoder.BUFFER_SIZE (server/rooms/state.ts, the social room) was raised on a copy
 * Colyseus never used, a 1,000-user social room's full state overflowed the 16 KB default, and
 * spectators' SDKs failed to decode the patches after it. Vitest loads one copy (ES modules
 * only), so only a real `socialworld serve` shows this.
 */
import { describe, expect, it } from "vitest";
import { ADMIN, serve } from "./child-server.js";
import { joinFrom, until } from "./raw-client.js";

describe("the bundled server's state encoder", () => {
  it("sends a 1,000-user social room's full state without growing its buffer (one copy of @colyseus/schema)", async () => {
    const server = await serve();
    const created = await fetch(`${server.base}/api/rooms`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ type: "social", options: { users: 1000, seed: 3, tickMs: 200 } }),
    });
    expect(created.status).toBe(201);
    const { roomId } = (await created.json()) as { roomId: string };
    const { client } = await joinFrom(server.base, roomId, {});
    expect(client?.seen.token).not.toBe("");
    // The full state (the seats alone are about 120 KB) went out on joining; a few patches after it.
    let frames = 0;
    client!.ws.on("message", () => frames++);
    await until(() => frames >= 3, 30_000, "three frames after the join");
    client!.ws.close();
    expect(server.out()).not.toContain("buffer overflow");
  }, 60_000);
});
