/**
 * What every HTTP request to the server passes first, before Colyseus, express and socket.io:
 *
 * - CORS. Colyseus answered every route (`/api`, `/v1`, `/matchmake`) with
 *   `Access-Control-Allow-Origin: <the request's Origin>` and `Allow-Credentials: true`, so any
 *   web page could call the server from a visitor's browser and read the answers. Now the server
 *   is same-origin only (its own web client needs no CORS header), unless an Origin is listed in
 *   `allowedOrigins`: then that origin, and only it, gets the header (never with credentials: the
 *   server uses tokens in headers, not cookies).
 * - `/matchmake/` POSTs, taken by matchmake-gate.ts.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import { matchMaker } from "@colyseus/core";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Colyseus's own CORS headers off: this gate sets them. (Colyseus's matchmaking controller is one per process.) */
export function silenceColyseusCors(): void {
  const c = matchMaker.controller as { DEFAULT_CORS_HEADERS: Record<string, string>; getCorsHeaders: (h: Headers) => Record<string, string> };
  c.DEFAULT_CORS_HEADERS = {};
  c.getCorsHeaders = () => ({});
}

/** Sets the CORS headers `origin` may have (none unless it is listed). */
export function applyCors(req: IncomingMessage, res: ServerResponse, allowedOrigins: ReadonlySet<string>): void {
  res.setHeader("vary", "Origin");
  const origin = req.headers.origin;
  if (typeof origin !== "string" || !allowedOrigins.has(origin)) return;
  res.setHeader("access-control-allow-origin", origin);
  res.setHeader("access-control-allow-methods", "GET,HEAD,POST,DELETE");
  res.setHeader("access-control-allow-headers", "Content-Type, Authorization");
  res.setHeader("access-control-max-age", "600");
}

/**
 * Puts `gates` in front of the server's request handlers: each may take a request (returning
 * true) or leave it to the next, and the handlers registered so far see only what no gate took.
 * Call it after Colyseus has bound its routes and before socket.io attaches (which wraps whatever
 * handlers it finds).
 */
export function installHttpGate(http: HttpServer, allowedOrigins: readonly string[], gates: readonly ((req: IncomingMessage, res: ServerResponse) => boolean)[]): void {
  const origins = new Set(allowedOrigins);
  const handlers = http.listeners("request") as Handler[];
  http.removeAllListeners("request");
  http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    applyCors(req, res, origins);
    for (const gate of gates) if (gate(req, res)) return;
    for (const h of handlers) h.call(http, req, res);
  });
}
