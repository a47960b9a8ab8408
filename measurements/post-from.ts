/**
 * A JSON POST from a loopback address of the caller's choosing: 127.0.0.2 and up reach a server
 * listening on 127.0.0.1, and to that server each is another client (its limits are per address).
 * The attack script and the server's tests use it to be many clients from one machine.
 */
import { request } from "node:http";

export interface Posted {
  readonly status: number;
  /** The body as JSON, or its text when it is not JSON. */
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly text: string;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Milliseconds from sending to the whole answer. */
  readonly ms: number;
}

/** Status 0: the server hung up before answering (as a server may on an upload it refused). */
export function postFrom(url: string, body: string | Buffer, localAddress = "127.0.0.1", headers: Record<string, string> = {}): Promise<Posted> {
  const t0 = performance.now();
  return new Promise((done) => {
    const req = request(url, { method: "POST", localAddress, headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += String(d)));
      res.on("end", () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
        done({ status: res.statusCode ?? 0, json, text, headers: res.headers, ms: performance.now() - t0 });
      });
    });
    req.on("error", () => done({ status: 0, json: undefined, text: "", headers: {}, ms: performance.now() - t0 }));
    req.end(body);
  });
}
