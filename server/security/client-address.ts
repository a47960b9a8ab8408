/**
 * Who a client is, for the server's limits: the address its TCP connection comes from. Headers
 * (X-Forwarded-For, X-Real-IP) are never read: any client can write them, and a limit keyed on
 * them would be a limit on nothing. (Behind a reverse proxy every client has the proxy's address;
 * the proxy is then the place for per-client limits.)
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { Socket } from "node:net";

/** An IPv4 client of a dual-stack socket shows as ::ffff:a.b.c.d; it is the same client as a.b.c.d. */
function normalize(address: string | undefined): string {
  if (!address) return "unknown";
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export function requestAddress(req: IncomingMessage): string {
  return normalize(req.socket?.remoteAddress);
}

export function socketAddress(socket: Socket | undefined): string {
  return normalize(socket?.remoteAddress);
}

/** Room clients' addresses, by their WebSocket (the transport records each as it connects). */
const sockets = new WeakMap<object, string>();

export function recordClientAddress(ws: object, req: IncomingMessage): void {
  sockets.set(ws, requestAddress(req));
}

/** The address a room client connected from ("unknown" for one the transport did not record). */
export function clientAddress(client: { ref?: unknown }): string {
  const ws = client.ref;
  return (typeof ws === "object" && ws !== null ? sockets.get(ws) : undefined) ?? "unknown";
}

/** Whether listening on `host` serves this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  if (h.startsWith("::ffff:")) return isLoopbackHost(h.slice(7));
  return isIP(h) === 4 && h.startsWith("127.");
}
