/**
 * Errors in OpenAI's shape, so that OpenAI clients raise their usual exceptions:
 *
 *   {"error": {"message": "...", "type": "invalid_request_error", "param": "temperature", "code": null}}
 *
 * Nothing a client sends can crash the server: every failure of a /v1 route ends here.
 */
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { z } from "zod";

const TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "invalid_request_error",
  413: "invalid_request_error",
  429: "rate_limit_error",
  500: "server_error",
  503: "server_error",
};

export class OpenAiError extends Error {
  readonly param: string | null;
  readonly code: string | null;
  /** How long a client should wait before retrying (429, 503), in milliseconds. */
  readonly retryAfterMs?: number;

  constructor(
    readonly status: number,
    message: string,
    opts: { param?: string; code?: string; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.name = "OpenAiError";
    this.param = opts.param ?? null;
    this.code = opts.code ?? null;
    if (opts.retryAfterMs !== undefined) this.retryAfterMs = opts.retryAfterMs;
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: TYPES[this.status] ?? "invalid_request_error", param: this.param, code: this.code } };
  }
}

/** A zod failure as a 400 naming the first field at fault (OpenAI names one `param`). */
export function requestError(error: z.ZodError): OpenAiError {
  const issue = error.issues[0]!;
  const param = issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : "";
  return new OpenAiError(400, `${param ? `${param}: ` : ""}${issue.message}${more}`, param ? { param } : {});
}

export function sendError(res: Parameters<RequestHandler>[1], err: OpenAiError): void {
  if (err.retryAfterMs !== undefined) {
    res.setHeader("retry-after", String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))));
    res.setHeader("retry-after-ms", String(Math.round(err.retryAfterMs)));
  }
  res.status(err.status).json(err.body());
}

export const notFound: RequestHandler = (req, res) => {
  sendError(res, new OpenAiError(404, `no route ${req.method} ${req.baseUrl}${req.path}`, { code: "unknown_url" }));
};

export const errorHandler: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (err instanceof OpenAiError) return sendError(res, err);
  // body-parser's errors: a body over the limit, malformed JSON.
  const e = err as { type?: string; status?: number; message?: string; limit?: number };
  if (e.type === "entity.too.large") {
    // The rest of the upload is not read: the connection closes after the answer.
    res.setHeader("connection", "close");
    return sendError(res, new OpenAiError(413, `request body too large: this server reads at most ${e.limit ?? "?"} bytes (what the served models' contexts can hold)`, { code: "request_too_large" }));
  }
  if (e.type === "entity.parse.failed") return sendError(res, new OpenAiError(400, "the request body is not valid JSON"));
  if (typeof e.status === "number" && e.status >= 400 && e.status < 500) return sendError(res, new OpenAiError(e.status, e.message ?? "bad request"));
  console.error(`[v1] ${(err as Error).stack ?? String(err)}`);
  sendError(res, new OpenAiError(500, "internal error"));
};
