/**
 * What the llm tests run against: a real `serve-policy` server of the project, serving small
 * policies trained here (seeded) to write the replies the tests need, built with the agent's own
 * prompt functions so that what a policy learned is exactly what the agent will ask.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { saveCheckpoint, type CheckpointFiles } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { initParams } from "../../models/init.js";
import { PolicyModel } from "../../models/model.js";
import type { ChatMessage } from "../../agents/llm/client.js";
import { contextPrompt, formatInstruction, repairMessages, simulationAnswerPrompt, systemMessages } from "../../agents/llm/prompts.js";
import { readStructured, responseSchema } from "../../agents/llm/structured.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import type { Mode } from "../../worlds/question/benchmark.js";
import { startPolicyServer, type PolicyServer } from "../../server/openai/app.js";
import { encodeExamples } from "../../trainers/sft/batches.js";
import { trainSft } from "../../trainers/sft/trainer.js";
import { SocializedContextSchema, type SocializedContext } from "../../worlds/core/socialized-context.js";
import { AnswerSchema, type QuestionTask } from "../../worlds/question/world.js";
import { tempDir } from "../policy/fixtures.js";

/** One ToMi story told twice, a question after each (first-order belief, then reality). */
export const STORY = ["1 Ella entered the garage.", "2 Avery entered the garage.", "3 The apple is in the box.", "4 Ella exited the garage.", "5 Avery moved the apple to the crate."];
export const TOMI_FILE = [...STORY, "6 Where will Ella look for the apple?\tbox\t1", ...STORY, "6 Where is the apple really?\tcrate\t5", ""].join("\n");

export interface StoryCase {
  readonly file: string;
  readonly tasks: readonly QuestionTask[];
  /** The world model's context of the story. */
  readonly context: SocializedContext;
}

export async function tomiCase(mode: Mode): Promise<StoryCase> {
  const file = join(tempDir("sw-llm-"), "q.txt");
  writeFileSync(file, TOMI_FILE);
  const b = new TomiBenchmark();
  const items = b.load(file);
  const gt = await b.groundTruth(items[0]!);
  return { file, tasks: items.map((i) => b.task(i, mode)), context: gt.context };
}

export const ANSWER = responseSchema("action", AnswerSchema);
export const CONTEXT = responseSchema("socialized_context", SocializedContextSchema);
const answerFormat = formatInstruction(ANSWER.schema);

export type Conversation = ChatMessage[];

/** The agent's vanilla question and the reply to learn. */
export function answerConversation(task: QuestionTask, reply: string): Conversation {
  return [...systemMessages(undefined, answerFormat), { role: "user", content: task.prompt }, { role: "assistant", content: reply }];
}

/** A first reply the agent cannot read, then its repair request and the reply to learn. */
export function repairConversation(task: QuestionTask, bad: string, good: string): Conversation {
  const first = [...systemMessages(undefined, answerFormat), { role: "user" as const, content: task.prompt }];
  const read = readStructured(bad, ANSWER);
  if (read.ok) throw new Error("the bad reply must be unreadable");
  return [...repairMessages(first, bad, read.error, answerFormat), { role: "assistant", content: good }];
}

/** Simulation mode: the context request (the world model's context as the reply) and each answer request. */
export function simulationConversations(c: StoryCase, answers: readonly string[]): Conversation[] {
  const task = c.tasks[0]!;
  return [
    [{ role: "user", content: contextPrompt(task, CONTEXT.schema) }, { role: "assistant", content: JSON.stringify(c.context) }],
    ...c.tasks.map((t, i): Conversation => [...systemMessages(undefined, answerFormat), { role: "user", content: simulationAnswerPrompt(t, c.context) }, { role: "assistant", content: answers[i]! }]),
  ];
}

/**
 * A small Qwen2 policy (2 layers, `hidden` wide, a tokenizer built from the conversations) trained
 * until it writes every conversation's last reply; returns its checkpoint folder.
 */
export async function trainedPolicy(convs: readonly Conversation[], opts: { seed: number; steps: number; lr?: number; hidden?: number; positions?: number }): Promise<string> {
  const base = await createFromScratch({ preset: "10m", seed: opts.seed, corpus: convs.flatMap((c) => c.map((m) => m.content)) });
  const hidden = opts.hidden ?? 64;
  const positions = opts.positions ?? 1024;
  const config = { ...base.files.config, hidden_size: hidden, intermediate_size: 2 * hidden, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: positions };
  const model = new PolicyModel(config);
  initParams(model, opts.seed);
  const files: CheckpointFiles = { ...base.files, config };
  const examples = encodeExamples(
    base.tokenizer,
    convs.map((messages, i) => ({ messages, line: i + 1 })),
    positions,
  ).examples;
  const out = tempDir("sw-llm-policy-");
  await trainSft({
    out,
    model,
    files,
    examples,
    // One example per micro-batch: no padding to the longest.
    settings: { steps: opts.steps, lr: opts.lr ?? 1e-2, minLr: 1e-3, warmupSteps: 10, batch: 1, gradAccum: examples.length, weightDecay: 0, beta1: 0.9, beta2: 0.99, eps: 1e-8, clip: 1, seed: opts.seed, maxLen: positions },
    dataId: "llm-test",
    saveEvery: 1_000_000,
    keep: 1,
  });
  saveCheckpoint(out, model, files);
  return out;
}

/** An untrained policy, 10m-sized: slow enough (about 2 ms a token here) for deadlines to pass. */
export async function slowPolicy(seed = 5): Promise<string> {
  const m = await createFromScratch({ preset: "10m", seed, corpus: STORY });
  const dir = tempDir("sw-llm-slow-");
  saveCheckpoint(dir, m.model, m.files);
  return dir;
}

export async function serve(models: Record<string, string>, opts: { maxWaiting?: number; maxBatch?: number; apiKey?: string; port?: number; enforceFormat?: boolean } = {}): Promise<PolicyServer> {
  return startPolicyServer({
    models: Object.entries(models).map(([id, dir]) => ({ id, dir })),
    port: opts.port ?? 0,
    host: "127.0.0.1",
    ...(opts.maxWaiting !== undefined ? { maxWaiting: opts.maxWaiting } : {}),
    ...(opts.maxBatch !== undefined ? { maxBatch: opts.maxBatch } : {}),
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    ...(opts.enforceFormat !== undefined ? { enforceFormat: opts.enforceFormat } : {}),
  });
}

/** POSTs JSON to the server; returns the status, headers and parsed body (or raw text). */
export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** The `data:` events of a server-sent-events body, parsed ([DONE] as the string). */
export function sseEvents(text: string): unknown[] {
  return text
    .split("\n\n")
    .filter((b) => b.startsWith("data: "))
    .map((b) => b.slice(6))
    .map((d) => (d === "[DONE]" ? d : JSON.parse(d)));
}
