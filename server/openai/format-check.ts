/**
 * `response_format` checked after sampling: the guard behind the grammar that enforces it while
 * sampling (response-grammar.ts), which a stop string can still cut short. A reply to
 * `json_object` must be one JSON object; a reply to `json_schema` must also match the schema
 * (read with zod's `fromJSONSchema`). The verdict goes back with each choice as
 * `format_check: {valid, error?}`, so a client sees at once when a reply broke the format, and a
 * schema the checker cannot read is refused up front (400) rather than ignored.
 */
import { z } from "zod";
import { OpenAiError } from "./errors.js";
import type { ResponseFormat } from "./schemas.js";

export interface FormatCheck {
  readonly valid: boolean;
  readonly error?: string;
}

export type FormatChecker = (text: string) => FormatCheck;

/** The checker for a request's response_format, or undefined for plain text. */
export function formatChecker(format: ResponseFormat | null | undefined): FormatChecker | undefined {
  if (!format || format.type === "text") return undefined;
  let schema: z.ZodType | undefined;
  if (format.type === "json_schema" && format.json_schema.schema) {
    try {
      schema = z.fromJSONSchema(format.json_schema.schema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (err) {
      throw new OpenAiError(400, `response_format.json_schema.schema: this server cannot read the schema: ${(err as Error).message}`, { param: "response_format.json_schema.schema" });
    }
  }
  return (text) => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { valid: false, error: "the output is not valid JSON" };
    }
    if (json === null || typeof json !== "object" || Array.isArray(json)) return { valid: false, error: "the output is not a JSON object" };
    if (!schema) return { valid: true };
    const r = schema.safeParse(json);
    return r.success ? { valid: true } : { valid: false, error: `the output does not match the schema: ${z.prettifyError(r.error).replace(/\n/g, "; ")}` };
  };
}
