/**
 * Raw clients over `ws`, as any client in any language would connect (docs/protocol.md), and
 * polling until a condition holds. No side effects on import: the child-process tests and the
 * in-process harness both use them.
 */
import { pack } from "msgpackr";
import WebSocket from "ws";
import { postFrom } from "../../measurements/post-from.js";
import { decodeFrames } from "./wire.js";

export { postFrom };

/** A socket to the room, answering the join handshake; its token, error frames and close code. */
export function connect(url: string, localAddress?: string) {
  const ws = new WebSocket(url, localAddress ? { localAddress } : {});
  const seen = { token: "", errors: [] as string[], closed: undefined as number | undefined };
  ws.on("message", (data: Buffer) => {
    if (data[0] === 10) {
      seen.token = data.subarray(2, 2 + data[1]!).toString();
      ws.send(Buffer.from([10]));
    }
    if (data[0] === 11) seen.errors.push(data.subarray(1).toString("latin1"));
  });
  ws.on("close", (code) => (seen.closed = code));
  return { ws, seen };
}

/** A raw client that keeps every frame it receives; `messages(type)`: the payloads of that type it was sent. */
export function recording(url: string) {
  const client = connect(url);
  const frames: Uint8Array[] = [];
  client.ws.on("message", (data: Buffer) => frames.push(new Uint8Array(data)));
  const messages = (type: string) => decodeFrames(frames).messages.filter((m) => m.type === type).map((m) => m.payload);
  return { ...client, frames, messages };
}

/** A room message as a client sends it: ROOM_DATA, the type (a short msgpack string), the msgpack payload. */
export function roomData(type: string, payload: unknown): Buffer {
  return Buffer.concat([Buffer.from([13, 0xa0 | type.length]), Buffer.from(type), pack(payload)]);
}

/** Polls `pred` every 20 ms until it holds; fails naming `what` after `ms`. */
export async function until(pred: () => boolean | Promise<boolean>, ms = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Reserves a seat of `roomId` from `localAddress` and connects to it; the socket once joined (or refused). */
export async function joinFrom(base: string, roomId: string, options: Record<string, unknown>, localAddress = "127.0.0.1") {
  const r = await postFrom(`${base}/matchmake/joinById/${roomId}`, JSON.stringify(options), localAddress);
  if (r.status !== 200) return { reservation: r, client: undefined };
  const url = `${base.replace(/^http/, "ws")}/${r.json.processId}/${r.json.roomId}?sessionId=${r.json.sessionId}`;
  const client = connect(url, localAddress);
  await until(() => client.seen.token !== "" || client.seen.closed !== undefined, 10_000, "the join");
  return { reservation: r, client };
}
