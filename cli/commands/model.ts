/**
 * `socialworld model init|generate|logits|merge-lora|export-onnx`: make a seeded model from a
 * preset, sample from a checkpoint (with a LoRA adapter or not), print logits for parity checks,
 * merge an adapter into its base, export to ONNX.
 */
import { existsSync, readdirSync } from "node:fs";
import { z } from "zod";
import { checkpointFiles, loadCheckpoint, saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { NativeCompleter } from "../../models/generate.js";
import { mergeAdapter, relativeDifference } from "../../models/merge-lora.js";
import { exportOnnx } from "../../models/onnx/export.js";
import { useAdapterFolder } from "../../models/peft-adapter.js";
import { PRESETS } from "../../models/presets.js";
import { PolicyTokenizer } from "../../models/tokenizer.js";
import { DataError } from "../../worlds/core/errors.js";
import { intArg, numArg, parseCommand, UsageError } from "../args.js";
import { deviceArgs, useDevice } from "../device.js";
import { readTextInput } from "../../worlds/core/text-input.js";

export const MODEL_HELP = `socialworld model <command> ...

  init --preset NAME --out DIR     a new seeded model and its tokenizer (presets: ${Object.keys(PRESETS).join(", ")})
      [--seed S] [--corpus FILE] [--tokenizer bpe|word] [--tokenizer-from DIR] [--context N] [--force]
      The tokenizer is built from --corpus (text, one document per line; or JSONL of SFT
      examples), by default from generated ToMi stories; --tokenizer-from reuses a checkpoint's.
      --context N: the longest sequence in tokens (default the preset's, 1024 for 1m).
  generate DIR --prompt TEXT       sample a completion
      [--chat] [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--stop STR]
      [--adapter ADIR] [--device cpu|cuda|auto] [--precision fp32|tf32|bf16]
      --chat wraps the prompt as a user message in the checkpoint's chat template.
  logits DIR --text TEXT [--json]  token ids and the last position's logits (for parity checks)
      [--chat] [--dtype float32|float64] [--adapter ADIR] [--all]
      --all: every position's logits (with --json)
  merge-lora DIR --adapter ADIR --out DIR2
      [--text TEXT] [--force]      DIR2: DIR with the LoRA adapter merged in (W + alpha/r B A), a
                                   checkpoint folder; checked against DIR with the adapter unmerged
                                   on TEXT (logits within 1e-5 relative, or it fails)
  export-onnx DIR [--out DIR2]     write DIR/onnx/model.onnx (transformers.js / Optimum layout)

ADIR is a LoRA adapter in PEFT's layout (adapter_config.json, adapter_model.safetensors): what
\`train sft|grpo --lora\` writes, or what PEFT's save_pretrained writes, for the base model DIR.

DIR is a Hugging Face checkpoint folder (config.json, model.safetensors, tokenizer.json, ...):
ours, or a real Qwen2 / Qwen2.5 one.
`;

export async function modelCommand(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "init":
      return init(rest);
    case "generate":
      return generate(rest);
    case "logits":
      return logits(rest);
    case "merge-lora":
      return mergeLora(rest);
    case "export-onnx":
      return exportCommand(rest);
    default:
      throw new UsageError(sub === undefined ? "expected a subcommand: init, generate, logits, merge-lora or export-onnx" : `unknown subcommand "${sub}"`);
  }
}

const InitArgs = z.object({
  _: z.tuple([], { error: "init takes no positional arguments" }),
  preset: z.enum(Object.keys(PRESETS) as [string, ...string[]], { error: `expected one of ${Object.keys(PRESETS).join(", ")}` }),
  out: z.string({ error: "is required" }).min(1),
  seed: intArg(0, 2 ** 32 - 1).default(0),
  corpus: z.string().min(1).optional(),
  tokenizer: z.enum(["bpe", "word"]).default("bpe"),
  "tokenizer-from": z.string().min(1).optional(),
  context: intArg(16, 1 << 16).optional(),
  force: z.boolean().default(false),
});

async function init(argv: readonly string[]): Promise<number> {
  const a = parseCommand(argv, InitArgs);
  if (existsSync(a.out) && readdirSync(a.out).length > 0 && !a.force) throw new UsageError(`--out: ${a.out} is not empty (use --force to overwrite)`);
  const m = await createFromScratch({
    preset: a.preset,
    seed: a.seed,
    tokenizerKind: a.tokenizer,
    ...(a.corpus ? { corpus: readCorpus(a.corpus) } : {}),
    ...(a["tokenizer-from"] ? { tokenizerFrom: PolicyTokenizer.load(a["tokenizer-from"]) } : {}),
    ...(a.context !== undefined ? { context: a.context } : {}),
  });
  saveCheckpoint(a.out, m.model, m.files);
  const e = m.model.engine;
  process.stdout.write(
    `wrote ${a.out}: preset ${a.preset}, ${fmtCount(m.model.numParams)} parameters, vocabulary ${e.vocabSize}, ` +
      `${e.numLayers} layers x ${e.hiddenSize} (${e.numHeads} heads, ${e.numKvHeads} kv heads), seed ${a.seed}\n`,
  );
  return 0;
}

/** Corpus lines: plain text, or the texts of JSONL SFT examples. */
function readCorpus(file: string): string[] {
  const text = readTextInput(file);
  if (!file.endsWith(".jsonl")) return text.split("\n");
  const out: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new DataError(file, { line: i + 1 }, "not valid JSON");
    }
    collectStrings(v, out);
  });
  return out;
}

function collectStrings(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) v.forEach((x) => collectStrings(x, out));
  else if (v && typeof v === "object") Object.values(v).forEach((x) => collectStrings(x, out));
}

const GenerateArgs = z.object({
  _: z.tuple([z.string().min(1)], { error: "expected the checkpoint folder" }),
  prompt: z.string({ error: "is required" }),
  chat: z.boolean().default(false),
  "max-new-tokens": intArg(1, 1 << 20).default(64),
  temperature: numArg().nonnegative().default(0),
  "top-k": intArg(0).default(0),
  "top-p": numArg().positive().max(1).default(1),
  seed: intArg(0).default(0),
  stop: z.array(z.string().min(1)).default([]),
  adapter: z.string().min(1).optional(),
  ...deviceArgs,
});

async function generate(argv: readonly string[]): Promise<number> {
  const a = parseCommand(argv, GenerateArgs);
  await useDevice(a);
  const ck = loadCheckpoint(a._[0]);
  if (a.adapter) useAdapterFolder(ck.model, a.adapter);
  const text = a.chat ? ck.tokenizer.applyChatTemplate([{ role: "user", content: a.prompt }], { addGenerationPrompt: true }) : a.prompt;
  const completer = new NativeCompleter("cli", ck.model, ck.tokenizer);
  const [c] = await completer.complete([text], { maxNewTokens: a["max-new-tokens"], temperature: a.temperature, topK: a["top-k"], topP: a["top-p"], seed: a.seed, stop: a.stop });
  process.stdout.write(c!.text + "\n");
  process.stderr.write(`(${c!.tokens.length} tokens, ${c!.finishReason}, log-prob ${c!.logprobs.reduce((x, y) => x + y, 0).toFixed(3)})\n`);
  return 0;
}

const LogitsArgs = z.object({
  _: z.tuple([z.string().min(1)], { error: "expected the checkpoint folder" }),
  text: z.string({ error: "is required" }),
  json: z.boolean().default(false),
  chat: z.boolean().default(false),
  dtype: z.enum(["float32", "float64"]).default("float32"),
  adapter: z.string().min(1).optional(),
  all: z.boolean().default(false),
});

async function logits(argv: readonly string[]): Promise<number> {
  const a = parseCommand(argv, LogitsArgs);
  if (a.all && !a.json) throw new UsageError("--all goes with --json");
  const ck = loadCheckpoint(a._[0], { dtype: a.dtype });
  if (a.adapter) useAdapterFolder(ck.model, a.adapter);
  const text = a.chat ? ck.tokenizer.applyChatTemplate([{ role: "user", content: a.text }], { addGenerationPrompt: true }) : a.text;
  const ids = ck.tokenizer.encode(text);
  if (ids.length === 0) throw new UsageError("--text: the text has no tokens");
  const last = Array.from(ck.model.lastLogits(ids));
  if (a.json) {
    process.stdout.write(JSON.stringify({ ids, logits: last, ...(a.all ? { all: Array.from(ck.model.logits(ids)) } : {}) }) + "\n");
    return 0;
  }
  const max = Math.max(...last);
  const z = last.reduce((s, v) => s + Math.exp(v - max), 0);
  const top = last
    .map((v, i) => ({ i, p: Math.exp(v - max) / z, v }))
    .sort((x, y) => y.v - x.v)
    .slice(0, 10);
  process.stdout.write(`${ids.length} tokens; next-token distribution (top 10):\n`);
  for (const t of top) process.stdout.write(`  ${String(t.i).padStart(7)}  ${JSON.stringify(ck.tokenizer.decode([t.i])).padEnd(20)} ${(100 * t.p).toFixed(2).padStart(6)}%  logit ${t.v.toFixed(4)}\n`);
  return 0;
}

const MergeArgs = z.object({
  _: z.tuple([z.string().min(1)], { error: "expected the base model's checkpoint folder" }),
  adapter: z.string({ error: "is required" }).min(1),
  out: z.string({ error: "is required" }).min(1),
  text: z.string().min(1).default("Where will Ella look for the spinach? She put it in the green_crate before Avery moved it."),
  force: z.boolean().default(false),
});

// What merging may change in the logits: float32 rounding of W + scale B A against the two
// products of the unmerged pass.
const MERGE_TOLERANCE = 1e-5;

async function mergeLora(argv: readonly string[]): Promise<number> {
  const a = parseCommand(argv, MergeArgs);
  if (existsSync(a.out) && readdirSync(a.out).length > 0 && !a.force) throw new UsageError(`--out: ${a.out} is not empty (use --force to overwrite)`);
  const ck = loadCheckpoint(a._[0]);
  const adapter = useAdapterFolder(ck.model, a.adapter);
  const ids = ck.tokenizer.encode(a.text).slice(0, ck.model.engine.maxPositionEmbeddings);
  if (ids.length === 0) throw new UsageError("--text: the text has no tokens");
  const unmerged = Float64Array.from(ck.model.logits(ids));
  ck.model.useAdapter(undefined);
  mergeAdapter(ck.model, adapter);
  const merged = ck.model.logits(ids);
  const diff = relativeDifference(merged, unmerged);
  if (!(diff <= MERGE_TOLERANCE))
    throw new Error(`the merged model's logits differ from the unmerged adapter's by ${diff.toExponential(2)} relative (more than ${MERGE_TOLERANCE}): nothing written`);
  saveCheckpoint(a.out, ck.model, checkpointFiles(ck));
  const s = adapter.settings;
  process.stdout.write(
    `wrote ${a.out}: ${a._[0]} with the LoRA adapter ${a.adapter} merged in (r=${s.r}, alpha=${s.alpha}, ${s.targets.length} target modules x ${ck.model.engine.numLayers} layers); ` +
      `logits on ${ids.length} tokens match the unmerged adapter's within ${diff.toExponential(2)} relative\n`,
  );
  return 0;
}

const ExportArgs = z.object({
  _: z.tuple([z.string().min(1)], { error: "expected the checkpoint folder" }),
  out: z.string().min(1).optional(),
});

async function exportCommand(argv: readonly string[]): Promise<number> {
  const a = parseCommand(argv, ExportArgs);
  const ck = loadCheckpoint(a._[0]);
  const r = exportOnnx(ck.model, ck.dir, a.out ?? ck.dir);
  process.stdout.write(`wrote ${r.path}${r.externalData ? ` and ${r.externalData}` : ""} (${(r.bytes / 1e6).toFixed(1)} MB, opset 17)\n`);
  return 0;
}

function fmtCount(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}
