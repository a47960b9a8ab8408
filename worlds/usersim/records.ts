/**
 * Conversation records: a thread, the user who replied to it, and what they replied. The layout is
 * HumanLM's (its Humanual datasets: `prompt`, `completion`, `user_id`, `post_id`, `timestamp`,
 * `metadata`, and the `persona` its processing adds), with three optional fields of ours for the
 * ground truth: `states` (each state's text), `latent` (the generator's structures) and `history`
 * (the user's earlier replies). One record per JSONL line or Parquet row; docs/worlds/usersim.md
 * has the full description.
 *
 * Every problem is a DataError naming the file, the line (JSONL) or row (Parquet), and the field.
 */
import { readFileSync } from "node:fs";
import { parquetReadObjects } from "hyparquet";
import { z } from "zod";
import { DataError } from "../core/errors.js";
import { readTextInput } from "../core/text-input.js";
import { jsonError, valueAt } from "./json-error.js";
import { isLatentDimension, latentTexts, LatentSchema, type Latent } from "./latent.js";
import { PersonaSchema, type Persona } from "./profile.js";

const Id = z.union([z.string().trim().min(1, "is empty"), z.number(), z.bigint()], { error: "expected a string or a number" }).transform(String);
const Text = z.string({ error: "expected a string" });

const MessageSchema = z.looseObject({
  role: Id,
  content: Text,
});

const PastReplySchema = z.union([z.string().trim().min(1, "is empty"), z.looseObject({ prompt: z.string().nullish(), completion: Text.trim().min(1, "is empty") })], {
  error: 'expected a string or {"prompt", "completion"}',
});

export const RecordSchema = z.looseObject({
  id: Id.nullish(),
  user_id: Id,
  prompt: z.array(MessageSchema, { error: 'expected a list of messages {"role", "content"}' }).min(1, "has no messages"),
  completion: Text.trim().min(1, "is empty"),
  persona: PersonaSchema.nullish(),
  history: z.array(PastReplySchema).nullish(),
  states: z
    .record(z.string(), Text.trim().min(1, "is empty"))
    .superRefine((states, ctx) => {
      for (const k of Object.keys(states)) if (!/^[a-z][a-z0-9_]*$/.test(k)) ctx.addIssue({ code: "custom", path: [k], message: "a state's name is a lowercase tag name" });
    })
    .nullish(),
  latent: LatentSchema.nullish(),
  platform: z.string().nullish(),
  split: z.string().nullish(),
});

export interface ThreadMessage {
  readonly author: string;
  readonly text: string;
}

export interface PastReply {
  /** What it replied to (a thread's title or post), when known. */
  readonly context?: string;
  readonly text: string;
}

export interface ConversationRecord {
  readonly id: string;
  readonly source: { readonly file: string; readonly line?: number; readonly row?: number };
  readonly platform?: string;
  /** The user who replied (their id: the simulated user's seat). */
  readonly user: string;
  /** The thread before the reply, oldest first (its first message is the post). */
  readonly thread: readonly ThreadMessage[];
  /** What the user really replied. */
  readonly reply: string;
  readonly persona?: Persona;
  readonly history: readonly PastReply[];
  /** Ground-truth text of each state that has one (from `states`, else from `latent`). */
  readonly states: Readonly<Record<string, string>>;
  readonly latent?: Latent;
  readonly split?: string;
}

/** A zod issue's place in a record: `prompt[2].content`. */
function place(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}

function issueText(error: z.ZodError, json: unknown): string {
  const issue = error.issues[0]!;
  const at = place(issue.path);
  const missing = issue.code !== "unrecognized_keys" && valueAt(json, issue.path) === undefined;
  const what = missing ? "missing" : issue.message;
  return at === "" ? what : `${at}: ${what}`;
}

/** One record from its parsed JSON; `where` names it in errors. */
function toRecord(json: unknown, file: string, where: { line?: number; row?: number }, fallbackId: string): ConversationRecord {
  const fail = (message: string) => (where.line !== undefined ? new DataError(file, { line: where.line }, message) : new DataError(file, { field: `row ${where.row}` }, message));
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw fail(`expected a JSON object (a record), got ${Array.isArray(json) ? "an array" : json === null ? "null" : typeof json}`);
  const r = RecordSchema.safeParse(json);
  if (!r.success) throw fail(issueText(r.error, json));
  const d = r.data;
  const states: Record<string, string> = {};
  if (d.latent) Object.assign(states, latentTexts(d.latent));
  for (const [name, text] of Object.entries(d.states ?? {})) {
    // Both given: they must say the same, or the exact judge and the text judge would disagree.
    if (d.latent && isLatentDimension(name) && states[name] !== text) throw fail(`states.${name}: "${text}" is not what latent says ("${states[name]}")`);
    states[name] = text;
  }
  return {
    id: d.id ?? fallbackId,
    source: { file, ...where },
    ...(d.platform ? { platform: d.platform } : {}),
    user: d.user_id,
    thread: d.prompt.map((m) => ({ author: m.role, text: m.content })),
    reply: d.completion,
    ...(d.persona !== null && d.persona !== undefined ? { persona: d.persona } : {}),
    history: (d.history ?? []).map((h) => (typeof h === "string" ? { text: h } : { ...(h.prompt ? { context: h.prompt } : {}), text: h.completion })),
    states,
    ...(d.latent ? { latent: d.latent } : {}),
    ...(d.split ? { split: d.split } : {}),
  };
}

function checkIds(records: readonly ConversationRecord[], file: string): void {
  const seen = new Map<string, ConversationRecord>();
  for (const r of records) {
    const before = seen.get(r.id);
    if (before) {
      const at = (x: ConversationRecord) => (x.source.line !== undefined ? `line ${x.source.line}` : `row ${x.source.row}`);
      const where = r.source.line !== undefined ? { line: r.source.line } : { field: `row ${r.source.row}` };
      throw new DataError(file, where, `id "${r.id}" is already used on ${at(before)}`);
    }
    seen.set(r.id, r);
  }
  if (records.length === 0) throw new DataError(file, {}, "no conversation records");
}

/** Records from JSONL text: one JSON object per line; blank lines are skipped. */
export function parseConversationsJsonl(text: string, file: string): ConversationRecord[] {
  const out: ConversationRecord[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (err) {
      throw jsonError(line, file, err as Error, i + 1);
    }
    out.push(toRecord(json, file, { line: i + 1 }, `line ${i + 1}`));
  }
  checkIds(out, file);
  return out;
}

/** Records from Parquet rows (columns named as the JSONL fields; nested ones as lists and structs). */
export async function parseConversationsParquet(bytes: ArrayBuffer, file: string): Promise<ConversationRecord[]> {
  let rows: Record<string, unknown>[];
  try {
    rows = (await parquetReadObjects({ file: bytes })) as Record<string, unknown>[];
  } catch (err) {
    throw new DataError(file, {}, `cannot read as Parquet: ${(err as Error).message}`);
  }
  const out = rows.map((row, i) => toRecord(withoutNulls(row), file, { row: i + 1 }, `row ${i + 1}`));
  checkIds(out, file);
  return out;
}

/** Parquet gives absent struct fields as null: read them as absent, as JSON would leave them out. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === "object" && !(value instanceof Uint8Array) && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = withoutNulls(v);
    return out;
  }
  return value;
}

const PARQUET_MAGIC = "PAR1";

/** Records from FILE: Parquet when it starts with Parquet's magic bytes, JSONL otherwise. */
export async function readConversationsFile(file: string): Promise<ConversationRecord[]> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return parseConversationsJsonl(readTextInput(file), file); // names what is wrong with the path
  }
  if (bytes.subarray(0, 4).toString("latin1") === PARQUET_MAGIC) {
    return parseConversationsParquet(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, file);
  }
  return parseConversationsJsonl(readTextInput(file), file);
}
