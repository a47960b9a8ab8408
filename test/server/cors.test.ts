/**
 * Finding 6 of the hardening issue: CORS reflected any Origin with credentials. `/api/*`, `/v1`
 * and `/matchmake` answered `Access-Control-Allow-Origin: <any origin>` with
 * `Access-Control-Allow-Credentials: true`, so any web page could call the server from a
 * visitor's browser and read its answers. Now the server is same-origin only, unless origins are
 * listed (`--allow-origin`), and never sends credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.js";

let open: TestServer;
let listed: TestServer;
beforeAll(async () => {
  open = await startTestServer();
  listed = await startTestServer({ config: { allowedOrigins: ["https://lab.example:8443"] } });
});
afterAll(async () => {
  await open.close();
  await listed.close();
});

const ROUTES: [string, RequestInit][] = [
  ["/api/health", {}],
  ["/api/rooms", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
  ["/v1/models", {}],
  ["/matchmake/joinById/nope", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
  ["/api/runs", { method: "OPTIONS", headers: { "access-control-request-method": "POST", "access-control-request-headers": "authorization" } }],
  ["/matchmake/joinById/nope", { method: "OPTIONS", headers: { "access-control-request-method": "POST" } }],
];

async function corsOf(ts: TestServer, path: string, init: RequestInit, origin: string) {
  const res = await fetch(ts.base + path, { ...init, headers: { ...(init.headers as Record<string, string>), origin } });
  await res.arrayBuffer();
  return { status: res.status, origin: res.headers.get("access-control-allow-origin"), credentials: res.headers.get("access-control-allow-credentials") };
}

describe("CORS", () => {
  it("answers no other origin by default, on every route, preflight included", async () => {
    for (const [path, init] of ROUTES) {
      const c = await corsOf(open, path, init, "https://evil.example");
      expect(c.origin, `${init.method ?? "GET"} ${path}`).toBeNull();
      expect(c.credentials, `${init.method ?? "GET"} ${path}`).toBeNull();
    }
  });

  it("answers a listed origin, and only it, without credentials", async () => {
    for (const [path, init] of ROUTES) {
      const ok = await corsOf(listed, path, init, "https://lab.example:8443");
      expect(ok.origin, `${init.method ?? "GET"} ${path}`).toBe("https://lab.example:8443");
      expect(ok.credentials).toBeNull();
      const other = await corsOf(listed, path, init, "https://lab.example");
      expect(other.origin).toBeNull();
    }
  });
});
