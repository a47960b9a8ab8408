/**
 * SFT examples from a JSONL or Parquet file. A Parquet file has a `prompt` column (a string, or
 * VERL's list of {role, content} messages) and a `response` column (`socialworld export --format
 * sft` writes one). A JSONL line is one of:
 *   {"prompt": "...", "response": "...", "system"?: "..."}
 *   {"messages": [{"role": "system" | "user" | "assistant", "content": "..."}, ...]}
 *   an episode-log record (`socialworld bench` writes them): every turn with an observation
 *   becomes an example, the observation as the user's message and what the agent wrote (its raw
 *   output, else its action) as the response.
 * The loss goes on the assistant's messages only.
 */
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { z } from "zod";
import { DataError } from "../../worlds/core/errors.js";
import type { ChatMessage } from "../../models/chat-template.js";
import { actionText } from "../../agents/policy/action.js";
import { readTextInput } from "../../worlds/core/text-input.js";

const Message = z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() });

const PairLine = z.object({ prompt: z.string(), response: z.string(), system: z.string().optional() });
const MessagesLine = z.object({
  messages: z
    .array(Message)
    .min(2)
    .refine((m) => m.some((x) => x.role === "assistant"), "needs at least one assistant message"),
});
const EpisodeTurn = z
  .object({
    observation: z.string(),
    raw: z.string().optional(),
    action: z.unknown(),
    reward: z.number().optional(),
    source: z.string().optional(),
  })
  .loose();
const EpisodeLine = z.object({ turns: z.array(EpisodeTurn) }).loose();

export interface SftExample {
  readonly messages: readonly ChatMessage[];
  readonly line: number;
}

export interface ReadOptions {
  /** Episode logs: keep only turns whose reward is at least this. */
  readonly minReward?: number;
}

/** Examples from FILE.jsonl or FILE.parquet. */
export async function readExamplesFile(file: string, opts: ReadOptions = {}): Promise<SftExample[]> {
  return file.endsWith(".parquet") ? readParquetExamples(file) : readExamples(file, opts);
}

const ParquetRow = z.object({
  prompt: z.union([z.string(), z.array(Message).min(1)]),
  response: z.string(),
});

async function readParquetExamples(file: string): Promise<SftExample[]> {
  let rows: Record<string, unknown>[];
  try {
    rows = (await parquetReadObjects({ file: await asyncBufferFromFile(file), columns: ["prompt", "response"] })) as Record<string, unknown>[];
  } catch (err) {
    throw new DataError(file, {}, `cannot read as Parquet with prompt and response columns: ${(err as Error).message}`);
  }
  const out = rows.map((row, i): SftExample => {
    const r = ParquetRow.safeParse(row);
    if (!r.success) throw new DataError(file, { field: `row ${i}` }, describe(r.error));
    const prompt: ChatMessage[] = typeof r.data.prompt === "string" ? [{ role: "user", content: r.data.prompt }] : r.data.prompt;
    return { messages: [...prompt, { role: "assistant", content: r.data.response }], line: i + 1 };
  });
  if (out.length === 0) throw new DataError(file, {}, "no training examples in the file");
  return out;
}

export function readExamples(file: string, opts: ReadOptions = {}): SftExample[] {
  const text = readTextInput(file);
  const out: SftExample[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === "") continue;
    const line = i + 1;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new DataError(file, { line }, "not valid JSON");
    }
    if (json && typeof json === "object" && "turns" in json) {
      const ep = EpisodeLine.safeParse(json);
      if (!ep.success) throw new DataError(file, { line }, `episode record: ${describe(ep.error)}`);
      for (const t of ep.data.turns) {
        if (t.source === "fallback" || t.observation.trim() === "") continue;
        if (opts.minReward !== undefined && (t.reward ?? 0) < opts.minReward) continue;
        const response = t.raw ?? actionText(t.action);
        if (response.trim() === "") continue;
        out.push({ messages: [{ role: "user", content: t.observation }, { role: "assistant", content: response }], line });
      }
      continue;
    }
    if (json && typeof json === "object" && "messages" in json) {
      const m = MessagesLine.safeParse(json);
      if (!m.success) throw new DataError(file, { line }, describe(m.error));
      out.push({ messages: m.data.messages, line });
      continue;
    }
    const p = PairLine.safeParse(json);
    if (!p.success) throw new DataError(file, { line }, `expected {prompt, response}, {messages} or an episode record: ${describe(p.error)}`);
    out.push({
      messages: [...(p.data.system !== undefined ? [{ role: "system" as const, content: p.data.system }] : []), { role: "user", content: p.data.prompt }, { role: "assistant", content: p.data.response }],
      line,
    });
  }
  if (out.length === 0) throw new DataError(file, {}, "no training examples in the file");
  return out;
}

/** Where example `line` is in FILE, as DataError names it: a JSONL line, or a Parquet row (0-based, as the reader's errors say). */
export function exampleWhere(file: string, line: number): { line: number } | { field: string } {
  return file.endsWith(".parquet") ? { field: `row ${line - 1}` } : { line };
}

function describe(err: z.ZodError): string {
  const issue = err.issues[0]!;
  const path = issue.path.join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}
