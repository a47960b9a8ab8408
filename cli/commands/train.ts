/**
 * `socialworld train sft (--model DIR | --init PRESET) --data FILE.jsonl --out DIR [options]`
 */
import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { checkpointFiles, loadCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { LORA_HELP, type LoraSettings } from "../../models/lora-settings.js";
import { loadNative } from "../../models/native.js";
import { PRESETS } from "../../models/presets.js";
import { encodeExamples, longerThanContext } from "../../trainers/sft/batches.js";
import { exampleWhere, readExamplesFile, type SftExample } from "../../trainers/sft/examples.js";
import { DataError } from "../../worlds/core/errors.js";
import { resumeFolder, settingsMismatch } from "../../trainers/common/checkpoint-folders.js";
import { loraCheckpoint, resumedCheckpoint, trainableSummary } from "../../trainers/common/lora-run.js";
import { readTrainerState } from "../../trainers/sft/state.js";
import { dataId, stateSettings, trainSft, type SftSettings } from "../../trainers/sft/trainer.js";
import { claimFolder, FolderInUse, type FolderClaim } from "../../store/folder-claim.js";
import { intArg, numArg, parseCommand, UsageError } from "../args.js";
import { CHECKPOINTING_HELP, checkpointingArgs, DEVICE_HELP, deviceArgs, useCheckpointing, useDevice } from "../device.js";
import { loraArg } from "../lora-option.js";
import { Progress } from "../progress.js";
import { GRPO_HELP, grpoCommand } from "./train-grpo.js";
import { onStopSignal } from "../stop-signals.js";

/** `train --help`: what each trainer is for; `train sft --help` and `train grpo --help`: that trainer's options only. */
export function trainHelp(argv: readonly string[]): string {
  if (argv[0] === "sft") return SFT_HELP;
  if (argv[0] === "grpo") return GRPO_HELP;
  return `socialworld train sft|grpo [options]

  train sft    supervised fine-tuning on prompt/response pairs (JSONL or Parquet)
  train grpo   GRPO on a benchmark's questions (--bench NAME --data FILE) or a world's agent turns (--world NAME)

socialworld train sft --help and socialworld train grpo --help list each trainer's options.
`;
}

const SFT_HELP = `socialworld train sft (--model DIR | --init PRESET) --data FILE.jsonl --out DIR [options]

Supervised fine-tuning on prompt/response pairs, with the loss on the response tokens only.
FILE.jsonl lines: {"prompt", "response", "system"?}, {"messages": [...]}, or episode-log records
(each turn's observation and what the agent wrote); FILE.parquet: prompt and response columns
(what \`socialworld export --format sft\` writes). Checkpoints with optimizer state go to
OUT/checkpoint-STEP/; the final model to OUT/ (a Hugging Face folder); per-step records to
OUT/train_log.jsonl.

Options:
  --model DIR            start from this checkpoint
  --init PRESET          start from a new seeded model (${Object.keys(PRESETS).join(", ")}); its tokenizer is built from the data
  --data FILE            training examples (JSONL or Parquet)
  --out DIR              output folder
  --steps N              optimizer steps (default 1000)
  --lr X                 peak learning rate (default 3e-4)
  --min-lr X             final learning rate of the cosine decay (default lr / 10)
  --warmup N             warmup steps (default 5% of steps)
  --batch N              examples per micro-batch (default 8)
  --grad-accum N         micro-batches per step (default 1)
  --max-len N            drop examples longer than N tokens (default 1024); an example kept
                         but longer than the model's context is an error naming its line
  --prompt-loss X        also train on the prompt's tokens, with this weight against the
                         response's 1 (default 0: the response only); for a policy from scratch
  --field-weight K=X[,K=X]  a JSON response's field K: the tokens of its value weigh X against
                         the response's other tokens' 1 (e.g. action=20: the decision of a
                         structured answer, one token of many, weighs as much as the rest)
  --weight-decay X       AdamW weight decay on matrices and embeddings (default 0.01)
  --beta1 X --beta2 X    AdamW betas (default 0.9, 0.95)
  --clip X               clip the global gradient norm (default 1; 0 = off)
  --seed S               data order and --init weights (default 0)
  --save-every N         checkpoint every N steps (default 100)
  --keep N               checkpoints kept (default 2)
  --resume auto|DIR      continue from OUT's latest checkpoint (auto; starts fresh if none) or DIR
  ${LORA_HELP}
                         (needs --model; OUT then holds the adapter and the tokenizer)
  --min-reward X         episode logs: only turns with at least this reward
  --threads N            CPU threads (default: all)
${DEVICE_HELP}
${CHECKPOINTING_HELP}
  --quiet                no progress bar
`;

const Args = z.object({
  _: z.tuple([z.literal("sft", { error: 'expected "sft" or "grpo"' })], { error: 'expected the trainer: "sft" or "grpo"' }),
  model: z.string().min(1).optional(),
  init: z.enum(Object.keys(PRESETS) as [string, ...string[]], { error: `expected one of ${Object.keys(PRESETS).join(", ")}` }).optional(),
  data: z.string({ error: "is required" }).min(1),
  out: z.string({ error: "is required" }).min(1),
  steps: intArg(1).default(1000),
  lr: numArg().positive().default(3e-4),
  "min-lr": numArg().nonnegative().optional(),
  warmup: intArg(0).optional(),
  batch: intArg(1, 65536).default(8),
  "grad-accum": intArg(1, 65536).default(1),
  "max-len": intArg(2).default(1024),
  "prompt-loss": numArg().min(0).max(1).default(0),
  "field-weight": z.string().min(1).optional(),
  "weight-decay": numArg().nonnegative().default(0.01),
  beta1: numArg().min(0).lt(1).default(0.9),
  beta2: numArg().min(0).lt(1).default(0.95),
  clip: numArg().nonnegative().default(1),
  seed: intArg(0, 2 ** 32 - 1).default(0),
  "save-every": intArg(1).default(100),
  keep: intArg(1).default(2),
  resume: z.string().min(1).optional(),
  lora: z.string().min(1).optional(),
  "min-reward": numArg().optional(),
  threads: intArg(1, 1024).optional(),
  ...deviceArgs,
  ...checkpointingArgs,
  quiet: z.boolean().default(false),
});
type Args = z.infer<typeof Args>;

export async function trainCommand(argv: readonly string[]): Promise<number> {
  if (argv[0] === "grpo") return grpoCommand(argv.slice(1));
  const a = parseCommand(argv, Args);
  if (!a.model === !a.init) throw new UsageError("give exactly one of --model DIR and --init PRESET");
  const lora = loraArg(a.lora);
  if (lora && !a.model) throw new UsageError("--lora adapts an existing model: give --model DIR (train one first with --init)");
  if (a.threads) loadNative().setThreads(a.threads);
  await useDevice(a);
  await useCheckpointing(a);
  const examples = await readExamplesFile(a.data, a["min-reward"] !== undefined ? { minReward: a["min-reward"] } : {});
  const settings: SftSettings = {
    steps: a.steps,
    lr: a.lr,
    minLr: a["min-lr"] ?? a.lr / 10,
    warmupSteps: a.warmup ?? Math.floor(a.steps * 0.05),
    batch: a.batch,
    gradAccum: a["grad-accum"],
    weightDecay: a["weight-decay"],
    beta1: a.beta1,
    beta2: a.beta2,
    eps: 1e-8,
    clip: a.clip,
    seed: a.seed,
    maxLen: a["max-len"],
    ...(a["prompt-loss"] > 0 ? { promptLoss: a["prompt-loss"] } : {}),
    ...(a["field-weight"] ? { fieldWeights: parseFieldWeights(a["field-weight"]) } : {}),
  };
  const id = dataId(a.data);
  mkdirSync(a.out, { recursive: true });
  const claim = await claimOut(a.out);
  try {
    return await trainSftInto(a, settings, examples, id, lora && { settings: lora, base: resolve(a.model!) });
  } finally {
    claim.release();
  }
}

/** The training itself, into a claimed OUT. */
async function trainSftInto(a: Args, settings: SftSettings, examples: SftExample[], id: string, lora: LoraRun | undefined): Promise<number> {
  // Where to start: a checkpoint to resume, the given model, or a new one.
  if (a.resume && a.resume !== "auto" && !existsSync(a.resume)) throw new UsageError(`--resume: ${a.resume} does not exist`);
  const resumeDir = resumeFolder(a.out, a.resume);
  let start = 0;
  let model, files, tokenizer;
  if (resumeDir) {
    const state = readTrainerState(resumeDir);
    const why = settingsMismatch(resumeDir, state.settings, stateSettings({ settings, dataId: id, lora }));
    // A LoRA checkpoint holds only the adapter: it is no model to start a new run from.
    if (why) throw new UsageError(`--resume: ${why}${state.settings.lora === undefined ? ` (or start a new run with --model ${resumeDir})` : ""}`);
    if (state.settings.lora !== undefined && !lora) throw new UsageError(`--resume: ${resumeDir} was trained with --lora: resume with the same --lora and --model`);
    const ck = resumedCheckpoint(resumeDir, lora, settings.seed);
    ({ model, tokenizer } = ck);
    files = checkpointFiles(ck);
    start = state.step;
    process.stderr.write(`resuming from ${resumeDir} (step ${start} of ${a.steps})\n`);
  } else if (a.model) {
    const ck = lora ? loraCheckpoint(a.model, lora.settings, settings.seed) : loadCheckpoint(a.model);
    ({ model, tokenizer } = ck);
    files = checkpointFiles(ck);
  } else {
    const texts = examples.flatMap((e) => e.messages.map((m) => m.content));
    const m = await createFromScratch({ preset: a.init!, seed: a.seed, corpus: texts });
    ({ model, tokenizer, files } = m);
  }

  const encoded = encodeExamples(tokenizer, examples, settings.maxLen, { promptLoss: settings.promptLoss ?? 0, ...(settings.fieldWeights ? { fieldWeights: settings.fieldWeights } : {}) });
  if (settings.fieldWeights && encoded.withoutFields > 0)
    process.stderr.write(`note: --field-weight: ${encoded.withoutFields} response(s) are not a JSON object with any of the fields ${Object.keys(settings.fieldWeights).join(", ")} (weighed 1 throughout)\n`);
  if (encoded.examples.length === 0) throw new UsageError(`--data: no example fits --max-len ${settings.maxLen} with a response to train on`);
  if (encoded.tooLong) process.stderr.write(`note: ${encoded.tooLong} example(s) longer than --max-len ${settings.maxLen} left out\n`);
  const context = model.engine.maxPositionEmbeddings;
  const over = longerThanContext(encoded.examples, context);
  if (over.length) {
    const first = over[0]!;
    const others = over.length > 1 ? ` (and ${over.length - 1} more example(s) of the file)` : "";
    throw new DataError(a.data, exampleWhere(a.data, first.line), `example of ${first.tokens.length} tokens${others}, longer than the model's context (max_position_embeddings ${context}); pass --max-len ${context} to leave such examples out, or train a model with a longer context`);
  }
  if (encoded.examples.length < settings.batch) process.stderr.write(`note: ${encoded.examples.length} example(s), fewer than --batch ${settings.batch}: batches repeat examples\n`);

  process.stderr.write(`${trainableSummary(model)}\n`);
  const progress = new Progress("sft", a.steps, a.quiet ? null : process.stderr);
  progress.update(start);
  const controller = new AbortController();
  const signals = onStopSignal(() => controller.abort());
  let recent: { tokens: number; seconds: number }[] = [];
  try {
    const r = await trainSft({
      out: a.out,
      model,
      files,
      examples: encoded.examples,
      settings,
      dataId: id,
      ...(lora ? { lora } : {}),
      saveEvery: a["save-every"],
      keep: a.keep,
      startStep: start,
      signal: controller.signal,
      onStep: (s) => {
        recent = [...recent.slice(-9), { tokens: s.tokens, seconds: s.seconds }];
        const tps = recent.reduce((x, y) => x + y.tokens, 0) / recent.reduce((x, y) => x + y.seconds, 0);
        progress.update(s.step, `loss ${s.loss.toFixed(4)} lr ${s.lr.toExponential(2)} ${fmtRate(tps)} tok/s`);
      },
    });
    progress.finish();
    if (r.interrupted) {
      process.stderr.write(`interrupted after step ${r.steps}: checkpoint saved; continue with --resume auto\n`);
      return signals.exitCode;
    }
    process.stdout.write(
      `trained ${r.steps} steps on ${encoded.examples.length} examples: final loss ${r.lastLoss?.toFixed(4)}, ${fmtRate(r.tokensPerSecond)} tokens/s; ${lora ? "LoRA adapter (PEFT layout)" : "model"} in ${resolve(a.out)}\n`,
    );
    return 0;
  } finally {
    signals.dispose();
  }
}

/** `action=20,target=2` -> {action: 20, target: 2}. */
export function parseFieldWeights(spec: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of spec.split(",")) {
    const m = /^\s*([^=\s]+)\s*=\s*([0-9.eE+]+)\s*$/.exec(part);
    const w = m ? Number(m[2]) : NaN;
    if (!m || !Number.isFinite(w) || w < 0) throw new UsageError(`--field-weight: expected FIELD=WEIGHT pairs with weights of 0 or more (action=20), got "${part}"`);
    out[m[1]!] = w;
  }
  return out;
}

interface LoraRun {
  readonly settings: LoraSettings;
  readonly base: string;
}

/** OUT for this run alone: a second run on it by mistake stops here, before writing anything. */
async function claimOut(out: string): Promise<FolderClaim> {
  try {
    return await claimFolder(out);
  } catch (err) {
    if (err instanceof FolderInUse) throw new UsageError(`--out: ${err.message}`);
    throw err;
  }
}

function fmtRate(r: number): string {
  return r >= 1000 ? `${(r / 1000).toFixed(1)}k` : r.toFixed(0);
}
