/** Reading JSON input: where a parse failed, what a field held. */
import { DataError } from "../core/errors.js";

export function jsonError(text: string, file: string, err: Error, firstLine = 1): DataError {
  const pos = /position (\d+)/.exec(err.message);
  const truncated = pos ? Number(pos[1]) >= text.trimEnd().length : /unexpected end|unterminated/i.test(err.message);
  if (truncated) return new DataError(file, { line: firstLine + text.trimEnd().split("\n").length - 1 }, "the JSON ends too soon: truncated?");
  const reason = err.message.replace(/ in JSON at position \d+.*$/, "").replace(/ \(line \d+ column \d+\)$/, "");
  const line = pos ? firstLine + text.slice(0, Number(pos[1])).split("\n").length - 1 : firstLine;
  return new DataError(file, { line }, `invalid JSON: ${reason}`);
}

/** The value at a zod issue's path in the input (undefined when the path leads nowhere). */
export function valueAt(json: unknown, path: readonly PropertyKey[]): unknown {
  let v = json;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}
