/**
 * `POST /matchmake/joinById/:roomId` and `POST /matchmake/reconnect/:roomId`, answered here
 * instead of by Colyseus's route, which reserved a seat for any body before any token was checked
 * and read bodies of any size. Here a reservation is made only after:
 *
 * - the client's address is within its reservation rate (over every process of a group) and not
 *   backing off (client-guard.ts);
 * - the body is a JSON object of at most 4 KiB;
 * - the room has checked the join options as it checks them when the client connects (a private
 *   room's tokens, the seat's rules), and the address's seat and unused-reservation caps and the
 *   room's spectator cap (base-room.ts, `screenReservation`).
 *
 * Errors go back as Colyseus's do (`{code, error}`, which the SDK raises), with an HTTP status that
 * says what happened, and never with the server's internal error text.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode, matchMaker, ServerError } from "@colyseus/core";
import { z } from "zod";
import type { ServerContext } from "../context.js";
import { reserveSeat, roomExists } from "../group/group-rooms.js";
import { requestAddress } from "./client-address.js";
import { Refused, waitText, type ClientGuard } from "./client-guard.js";

const MAX_BODY = 4096;
const ROUTE = /^\/matchmake\/(\w+)\/([A-Za-z0-9_-]{1,64})$/;
const ReconnectBody = z.object({ reconnectionToken: z.string().min(1).max(128) });

class GateError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Colyseus's codes as HTTP statuses (the SDK reads the body's code and error; the status is for everyone else). */
function statusOf(code: number): number {
  if (code === ErrorCode.AUTH_FAILED) return 403;
  if (code === ErrorCode.MATCHMAKE_INVALID_ROOM_ID || code === ErrorCode.MATCHMAKE_NO_HANDLER) return 404;
  if (code === ErrorCode.MATCHMAKE_EXPIRED) return 410;
  return 400;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const json = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(json)) });
  res.end(json);
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_BODY) {
      req.resume();
      return reject(new GateError(413, ErrorCode.MATCHMAKE_UNHANDLED, `request body too large (at most ${MAX_BODY} bytes)`));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        req.destroy();
        reject(new GateError(413, ErrorCode.MATCHMAKE_UNHANDLED, `request body too large (at most ${MAX_BODY} bytes)`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      if (text.trim() === "") return resolve({});
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new GateError(400, ErrorCode.MATCHMAKE_UNHANDLED, "the request body is not valid JSON"));
      }
    });
    req.on("error", reject);
  });
}

/** Takes `/matchmake/` POSTs (returns true); anything else is left to the other handlers. */
export function matchmakeGate(ctx: ServerContext, guard: ClientGuard): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (!path.startsWith("/matchmake/") || req.method !== "POST") return false;
    handle(ctx, guard, req, res, path).catch((err: unknown) => {
      if (err instanceof GateError) {
        const headers: Record<string, string> = err.retryAfterMs !== undefined ? { "retry-after": String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))) } : {};
        return send(res, err.status, { code: err.code, error: err.message }, headers);
      }
      if (err instanceof Refused) {
        const headers: Record<string, string> = err.retryAfterMs !== undefined ? { "retry-after": String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))) } : {};
        return send(res, err.status, { code: ErrorCode.MATCHMAKE_UNHANDLED, error: err.message }, headers);
      }
      if (err instanceof ServerError) return send(res, statusOf(err.code), { code: err.code, error: err.message });
      console.error(`[matchmake] ${(err as Error).stack ?? String(err)}`);
      send(res, 500, { code: ErrorCode.MATCHMAKE_UNHANDLED, error: "internal error" });
    });
    return true;
  };
}

async function handle(ctx: ServerContext, guard: ClientGuard, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const m = ROUTE.exec(path);
  const method = m?.[1];
  if (!m || (method !== "joinById" && method !== "reconnect")) {
    req.resume();
    throw new GateError(404, ErrorCode.MATCHMAKE_NO_HANDLER, `no matchmaking method here (this server takes joinById/ROOM_ID and reconnect/ROOM_ID)`);
  }
  const address = requestAddress(req);
  const allowed = await guard.reservationInGroup(address);
  if (!allowed.ok) {
    req.resume();
    throw new GateError(429, ErrorCode.MATCHMAKE_UNHANDLED, `too many requests from your address: retry in ${waitText(allowed.retryAfterMs)}`, allowed.retryAfterMs);
  }
  const body = await readBody(req);
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new GateError(400, ErrorCode.MATCHMAKE_UNHANDLED, "the request body must be a JSON object");
  const roomId = m[2]!;
  if (method === "reconnect") {
    const parsed = ReconnectBody.safeParse(body);
    if (!parsed.success) throw new GateError(400, ErrorCode.MATCHMAKE_UNHANDLED, "reconnect takes {reconnectionToken}");
    // Any process of the group: Colyseus asks the room's own process whether the token is good.
    if (!(await roomExists(ctx, roomId))) throw new GateError(404, ErrorCode.MATCHMAKE_INVALID_ROOM_ID, `room "${roomId}" not found`);
    return send(res, 200, await matchMaker.reconnect(roomId, parsed.data));
  }
  // The room checks the options as its onAuth would (throwing the same errors) before any seat is reserved.
  const reservation = await reserveSeat(ctx, roomId, body as Record<string, unknown>, address);
  if (!reservation) throw new GateError(404, ErrorCode.MATCHMAKE_INVALID_ROOM_ID, `room "${roomId}" not found`);
  send(res, 200, reservation);
}
