/**
 * Admin operations (create and stop rooms; later, start training) need the server's admin token:
 * `Authorization: Bearer <token>`. Reading public data needs nothing.
 */
import { timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler } from "express";
import { HttpError } from "./errors.js";

export function isAdmin(req: Request, token: string): boolean {
  const header = req.get("authorization") ?? "";
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m) return false;
  const given = Buffer.from(m[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function requireAdmin(token: string): RequestHandler {
  return (req, _res, next) => {
    if (!req.get("authorization")) throw new HttpError(401, "this operation needs the admin token (Authorization: Bearer <token>)");
    if (!isAdmin(req, token)) throw new HttpError(403, "wrong admin token");
    next();
  };
}
