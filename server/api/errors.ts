/** API errors: every failure is JSON `{ error }` with the right status, never a stack trace. */
import type { ErrorRequestHandler, RequestHandler } from "express";
import { z } from "zod";
import { describeIssues } from "../rooms/options.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** Parses `value` with `schema` or answers 400 naming the field (`where`: "body", "query", or "path parameter NAME"). */
export function parseOr400<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new HttpError(400, `bad ${where}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

export const notFound: RequestHandler = (req, res) => {
  res.status(404).json({ error: `no route ${req.method} ${req.path}` });
};

export const errorHandler: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
  if (err instanceof HttpError) {
    res.status(err.status).json({ error: err.message });
    return;
  }
  // body-parser's errors: a body over the limit, malformed JSON.
  const e = err as { type?: string; status?: number; message?: string };
  if (e.type === "entity.too.large") {
    res.status(413).json({ error: "request body too large" });
    return;
  }
  if (e.type === "entity.parse.failed") {
    res.status(400).json({ error: "request body is not valid JSON" });
    return;
  }
  // The router's: a path segment that is not valid percent-encoding ("/api/runs/%ZZ").
  if (err instanceof URIError && e.status === 400) {
    res.status(400).json({ error: `bad path parameter: ${(e.message ?? "").replace(/^Failed to decode param /, "not valid percent-encoding: ")}` });
    return;
  }
  if (typeof e.status === "number" && e.status >= 400 && e.status < 500) {
    res.status(e.status).json({ error: e.message ?? "bad request" });
    return;
  }
  console.error(`[api] ${(err as Error).stack ?? String(err)}`);
  res.status(500).json({ error: "internal error" });
};
