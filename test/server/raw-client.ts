/**
 * Raw clients over `ws`, as any client in any language would connect (README, "Protocol"), and
 * polling until a condition holds. No side effects on import: the child-process tests and the
 * in-process harness both use them.
 */
import WebSocket from "ws";

/** A socket to the room, answering the join handshake; its token, error frames and close code. */
export function connect(url: string) {
  const ws = new WebSocket(url);
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

/** Polls `pred` every 20 ms until it holds; fails naming `what` after `ms`. */
export async function until(pred: () => boolean | Promise<boolean>, ms = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
