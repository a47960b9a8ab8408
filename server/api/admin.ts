/**
 * Admin operations (create and stop rooms; later, start training) need the server's admin token:
 * `Authorization: Bearer <token>`. Reading public data needs nothing.
 */
import type { Request, RequestHandler } from "express";
import { sameSecret } from "../secret.js";
import { HttpError } from "./errors.js";

export function isAdmin(req: Request, token: string): boolean {
  const header = req.get("authorization") ?? "";
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  return m !== null && sameSecret(m[1]!, token);
}

export function requireAdmin(token: string): RequestHandler {
  return (req, _res, next) => {
    if (!req.get("authorization")) throw new HttpError(401, "this operation needs the admin token (Authorization: Bearer <token>)");
    if (!isAdmin(req, token)) throw new HttpError(403, "wrong admin token");
    next();
  };
}
