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
  return m !== null && sameSecret(m[1]!, token);
}

/** Compares a secret in constant time (no early exit an attacker could time). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function requireAdmin(token: string): RequestHandler {
  return (req, _res, next) => {
    if (!req.get("authorization")) throw new HttpError(401, "this operation needs the admin token (Authorization: Bearer <token>)");
    if (!isAdmin(req, token)) throw new HttpError(403, "wrong admin token");
    next();
  };
}
