/**
 * `socialworld train grpo --model DIR (--world W | --bench B --data FILE) --out DIR [options]`
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { LORA_HELP } from "../../models/lora-settings.js";
import { loadNative } from "../../models/native.js";
import { loadBenchmark, loadWorld, RegistryError, WORLD_NAMES } from "../../worlds/registry.js";
import { BenchmarkOptionError, flagOf, MODES, type BenchmarkOptions, type Mode } from "../../worlds/question/benchmark.js";
import type { Generator } from "../../worlds/core/world-entry.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { parseWithFlags } from "../benchmark-flags.js";
import { judgeModelArg } from "../judge-arg.js";
import { RunStore } from "../../store/run-store.js";
import { BenchPoints, WrittenContextUnavailable } from "../../trainers/grpo/bench-points.js";
import { GENERATION_MODES, isWrittenSource } from "../../agents/policy/options.js";
import { ADVANTAGE_ESTIMATORS, ADVANTAGE_STD, CREDIT_ASSIGNMENTS, GRPO_CONSTRAIN_MODES, POINT_BALANCES, GrpoConfigSchema, KL_ESTIMATORS, KL_PLACEMENTS, LOSS_AGGREGATIONS, type GrpoConfigInput } from "../../trainers/grpo/config.js";
import { progressNote, type StepMetrics } from "../../trainers/grpo/metrics.js";
import { MetricsPublisher } from "../../trainers/grpo/publisher.js";
import { runGrpoSession, SettingsMismatch } from "../../trainers/grpo/session.js";
import { PromptsTooLong } from "../../trainers/grpo/trainer.js";
import { WorldPoints } from "../../trainers/grpo/world-points.js";
import { generatedPoints } from "../../trainers/grpo/generated-points.js";
import { ScoredPoints } from "../../trainers/grpo/scored-points.js";
import type { PointSource } from "../../trainers/grpo/decision-point.js";
import { pointKinds } from "../../trainers/grpo/difficulty.js";
import { clip } from "../../worlds/core/errors.js";
import { GRPO_PRESET_NAMES, GRPO_PRESETS, type GrpoPreset, type GrpoPresetName } from "../../trainers/grpo/presets.js";
import { intArg, numArg, UsageError } from "../args.js";
import { CHECKPOINTING_HELP, checkpointingArgs, DEVICE_HELP, deviceArgs, useCheckpointing, useDevice } from "../device.js";
import { loraArg } from "../lora-option.js";
import { Progress } from "../progress.js";
import { onStopSignal } from "../stop-signals.js";
import { FolderInUse } from "../../store/folder-claim.js";

export const GRPO_HELP = `socialworld train grpo --model DIR (--world W | --bench B --data FILE) --out DIR [options]

Group Relative Policy Optimization of a policy on the native engine. Each step samples G replies
to each of --prompts decision points (a benchmark's questions, or a world's agent turns), scores
them with the world's reward functions (strict format against the action schema, exact answer
match, token F1, ROUGE-L), and updates the policy on the clipped surrogate with group-normalized
advantages. Rollouts are logged to the store as episodes (\`socialworld export --run ID\`);
per-step metrics go to OUT/metrics.jsonl; checkpoints (model, optimizer, data position) to
OUT/checkpoint-STEP/; the frozen reference to OUT/reference/; the final model to OUT/.

Data:
  --model DIR              the policy to start from (a checkpoint folder)
  --bench NAME --data FILE a benchmark file (${WORLD_NAMES.join(", ")}); --mode vanilla (default) or
                           simulation (the socialized context, then the question), as \`bench\` asks; --limit N
  --world NAME             decision points from scripted episodes of a world (${WORLD_NAMES.join(", ")});
                           --episodes N (default 200) from --world-seed S (default 0); a world that
                           scores any action itself (economy) gives --points N (default 2000) of
                           its own, rewarded with its graded reward (the exact part); a world whose
                           benchmark is graded (usersim) learns from N of its generator's records
                           from seed S (written under the store's generated/), the train split;
                           social: the prediction tasks of N generated trees (written to OUT), with
                           the world's reward (--reward exact=1,rougeL=1: type match + ROUGE-L of the content)
  --context full|short     social: the prompt, as \`bench social --context\` asks it (default full; short:
                           the profile line, the feed and one line of the facts that decide most
                           reactions); FANToM (--bench): the conversation given with each question
  --context self           --bench tomi --mode simulation: the policy writes the context itself (who saw
                           the asked object where, then the answer line), as policy:DIR?context=self is
                           asked, under its grammar; --reward trace=W adds W x its trace's lines right
  --context self-latest    the same, the trace written latest place first (policy:DIR?context=self-latest)
  --FACT                   social, with --context short: the facts line also states FACT, as
                           \`bench social --FACT\` (--stance, --agreement...: \`socialworld bench --help\` lists them)
  --preset NAME            named settings, which flags given beside it override:
${GRPO_PRESET_NAMES.map((n) => `                           ${n}: ${GRPO_PRESETS[n].describe}`).join("\n")}
  --hierarchy FILE         usersim: the reply's hierarchy (HumanLM's layout): hierarchical GRPO with the
                           default (six states, then the response); response-only GRPO with
                           worlds/usersim/hierarchies/response-only.json
  --weights SPEC  --split NAME   usersim: the judge's weights (TAG=W,...); the records' split
  --judge SPEC             usersim: score with an LLM judge, llm:MODEL@BASE_URL[?options] (default: the
                           offline judge, exact on the generator's states); a group is judged together
  --embedder SPEC          usersim: the offline judge's free text (the response, states outside the
                           vocabulary) by the cosine of sentence embeddings instead of ROUGE-L, as
                           \`bench usersim --embedder\`: onnx:DIR (a sentence-embedding model folder) or
                           lexical (hashed words, no model); not with --judge
  --system TEXT            a system message before each prompt (as the agent's ?system=)
  --out DIR                output folder

Sampling and batch:
  --steps N (100)  --prompts N per step (8)  --group-size G (8)
  --temperature X (1)  --top-k K (0: off)  --top-p P (1)  --max-new-tokens N (64)
  --constrain schema|options|off (schema)  sample each reply under its action's grammar (the
                           action schema's JSON, or a bare answer), so replies parse; the loss then
                           uses the masked distributions they were drawn from. options: one of the
                           answers the question lists (ToMi's containers in the story), as the
                           policy agent's constrain=options. off: the whole vocabulary
  --generation joint|per-level (joint)   usersim: the reply in one generation of --max-new-tokens,
                           or HumanLM's level by level: each state, then the response, by its own
                           prompt, under its own grammar, within its own max_tokens of the hierarchy
  --credit reply|level (reply)   usersim: every level's tokens get the reply's advantage, or
                           (level, HumanLM's per-tag rewards) each level's tokens the advantage of
                           that level's own score among the group's; a joint reply's tokens are split
                           by its tags (those outside every tag, and a malformed reply's, the reply's)
  --soft  --thinking-steps K (8)  --tau X (1)   SofT-GRPO: each reply first thinks in K soft tokens
                           (the --top-p support, 0.9 unless given, Gumbel-noised; the next input is
                           the softmax(q'/tau) mixture of embeddings), then answers in tokens; the
                           soft tokens' ratio is that of their Gumbel noise densities (docs/soft-grpo.md)
  --epochs N (1: updates per batch = epochs x prompts / mini-batch)  --mini-batch N (0: whole batch)
  --micro-batch N (16 sequences per pass; memory only)

Objective:
  --advantage grpo|rft (grpo)  rft: rejection-sampling fine-tuning, the group's best replies (reward
                           above 0) share the group's weight, the others 0 (docs/training.md)
  --advantage-std group|batch|none (group; none is Dr. GRPO)  --advantage-eps X (1e-6)
  --clip-low X (0.2)  --clip-high X (0.2; DAPO: 0.28)  --dual-clip C (3; 0 off)
  --loss-agg token-mean|seq-mean-token-mean|seq-mean-token-sum|seq-mean-token-sum-norm (token-mean)
  --kl X (0.001; 0: no reference)  --kl-estimator k1|k2|k3 (k3)  --kl-in loss|reward (loss)
  --entropy X (0: entropy bonus coefficient)
  --dynamic-sampling  --max-rollout-batches N (4)   drop groups with equal rewards, sample more
  --balance none|type (none)  type: draw every type of question in equal shares (each a row of the
                           benchmark's report), so a rule right on the common types cannot earn most
                           of the reward (docs/training.md)
  --skip-solved            leave out the points the starting policy already answers right (greedy)
  --keep-solved P (0)      with --skip-solved: keep this share of the solved ones anyway (seeded), a
                           replay against forgetting
  --keep-solved-type TYPE=P,...  with --skip-solved: the share kept of each named question type (as
                           --balance type reads them), in place of --keep-solved for that type
  --overlong-buffer N (0: off)  --overlong-penalty X (1)  --mask-truncated
  --reward exact=1,f1=0,rougeL=0,format=0,trace=0   weights of the reward parts (trace: with --context
                            self, the share of the written trace's lines that are the world model's)
  --format-failure X (-1)   the reward of a reply that fails the strict format
  --leak-penalty X (0)      subtracted for each fact a reply states that its agent never perceived
                            (the leak audit; world decision points: --world or self-play)

Optimizer:
  --lr X (1e-6)  --min-lr X (lr: constant)  --warmup N (0)  --weight-decay X (0.01)
  --schedule-steps N        the schedule's length in updates (steps x updates a step)
  --beta1 X (0.9)  --beta2 X (0.999)  --grad-clip X (1; 0 off)

Run:
  --seed S (0)  --save-every N (20)  --keep N (2)  --resume auto|DIR|off  --threads N  --quiet
                         --resume off: start afresh in OUT (its checkpoints removed), also with a
                         preset that resumes (econagent)
  ${LORA_HELP}
                         (the reference policy is then the base model itself; resuming needs --model)
${DEVICE_HELP}
${CHECKPOINTING_HELP}
  --store DIR           where rollouts are logged (default: $SOCIALWORLD_DATA, else data/ of the checkout)
  --server URL          also publish each step's metrics to a running server's progress stream
                        (needs --admin-token T or $SOCIALWORLD_ADMIN_TOKEN)
`;

const Args = z.object({
  _: z.tuple([]),
  model: z.string().min(1).optional(),
  bench: z.enum(WORLD_NAMES as [string, ...string[]]).optional(),
  data: z.string().min(1).optional(),
  mode: z.enum(MODES as [string, ...string[]]).default("vanilla"),
  limit: intArg(1).optional(),
  world: z.enum(WORLD_NAMES as [string, ...string[]]).optional(),
  episodes: intArg(1, 1_000_000).optional(),
  points: intArg(1, 1_000_000).optional(),
  preset: z.enum(GRPO_PRESET_NAMES as [string, ...string[]]).optional(),
  "world-seed": intArg(0, 2 ** 32 - 1).default(0),
  hierarchy: z.string().min(1).optional(),
  weights: z.string().min(1).optional(),
  split: z.string().min(1).optional(),
  judge: z.string().min(1).optional(),
  embedder: z.string().regex(/^(lexical|onnx:.+)$/, "expected lexical or onnx:DIR").optional(),
  context: z.enum(["short", "full", "self", "self-latest"]).optional(),
  system: z.string().min(1).optional(),
  out: z.string({ error: "is required" }).min(1),
  steps: intArg(1).optional(),
  prompts: intArg(1).optional(),
  "group-size": intArg(1, 4096).optional(),
  temperature: numArg().positive().optional(),
  "top-k": intArg(0).optional(),
  "top-p": numArg().positive().max(1).optional(),
  "max-new-tokens": intArg(1).optional(),
  soft: z.boolean().default(false),
  "thinking-steps": intArg(1, 4096).optional(),
  tau: numArg().positive().optional(),
  constrain: z.enum(GRPO_CONSTRAIN_MODES).optional(),
  generation: z.enum(GENERATION_MODES).optional(),
  credit: z.enum(CREDIT_ASSIGNMENTS).optional(),
  epochs: intArg(1).optional(),
  "mini-batch": intArg(0).optional(),
  "micro-batch": intArg(1).optional(),
  advantage: z.enum(ADVANTAGE_ESTIMATORS).optional(),
  balance: z.enum(POINT_BALANCES).optional(),
  "advantage-std": z.enum(ADVANTAGE_STD).optional(),
  "advantage-eps": numArg().min(0).optional(),
  "clip-low": numArg().min(0).max(1).optional(),
  "clip-high": numArg().min(0).optional(),
  "dual-clip": numArg().min(0).optional(),
  "loss-agg": z.enum(LOSS_AGGREGATIONS).optional(),
  kl: numArg().min(0).optional(),
  "kl-estimator": z.enum(KL_ESTIMATORS).optional(),
  "kl-in": z.enum(KL_PLACEMENTS).optional(),
  entropy: numArg().min(0).optional(),
  "dynamic-sampling": z.boolean().default(false),
  "skip-solved": z.boolean().default(false),
  "keep-solved": numArg().min(0).max(1).optional(),
  "keep-solved-type": z.string().min(1).optional(),
  "max-rollout-batches": intArg(1).optional(),
  "overlong-buffer": intArg(0).optional(),
  "overlong-penalty": numArg().min(0).optional(),
  "mask-truncated": z.boolean().default(false),
  reward: z.string().min(1).optional(),
  "format-failure": numArg().optional(),
  "leak-penalty": numArg().min(0).optional(),
  lr: numArg().positive().optional(),
  "min-lr": numArg().min(0).optional(),
  warmup: intArg(0).optional(),
  "schedule-steps": intArg(1).optional(),
  "weight-decay": numArg().min(0).optional(),
  beta1: numArg().min(0).lt(1).optional(),
  beta2: numArg().min(0).lt(1).optional(),
  "grad-clip": numArg().min(0).optional(),
  seed: intArg(0, 2 ** 32 - 1).optional(),
  "save-every": intArg(1).default(20),
  keep: intArg(1).default(2),
  resume: z.string().min(1).optional(),
  lora: z.string().min(1).optional(),
  threads: intArg(1, 1024).optional(),
  ...deviceArgs,
  ...checkpointingArgs,
  quiet: z.boolean().default(false),
  store: z.string().min(1).optional(),
  server: z.url().optional(),
  "admin-token": z.string().min(16).optional(),
});
type Args = z.infer<typeof Args>;

/** `exact=1,f1=0.5` -> {exact: 1, f1: 0.5}. */
export function parseRewardWeights(spec: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of spec.split(",")) {
    const m = /^\s*(exact|f1|rougeL|format|trace)\s*=\s*([0-9.eE+-]+)\s*$/.exec(part);
    if (!m || !Number.isFinite(Number(m[2]))) throw new UsageError(`--reward: expected NAME=WEIGHT pairs (exact, f1, rougeL, format, trace), got "${part}"`);
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** `--keep-solved-type first_order_tom=0.1,reality=1`: a share in [0, 1] for each named type. */
export function parseKeepSolvedByType(spec: string): Record<string, number> {
  const out = new Map<string, number>();
  for (const part of spec.split(",")) {
    const m = /^\s*([\w-]+)\s*=\s*([0-9.eE+-]+)\s*$/.exec(part);
    const share = Number(m?.[2]);
    if (!m || !(share >= 0 && share <= 1)) throw new UsageError(`--keep-solved-type: expected TYPE=SHARE pairs, each share in [0, 1], got "${clip(part)}"`);
    if (out.has(m[1]!)) throw new UsageError(`--keep-solved-type: ${m[1]} is given twice`);
    out.set(m[1]!, share);
  }
  return Object.fromEntries(out);
}

/** Refuses a `--keep-solved-type` name that is not a type of the points trained on (it would keep nothing of its own). */
function checkKeepSolvedTypes(spec: string, source: PointSource): void {
  const kinds = pointKinds(source);
  // The names as given (the config's schema would drop a "__proto__" without a word).
  const unknown = Object.keys(parseKeepSolvedByType(spec)).filter((name) => !kinds.includes(name));
  if (unknown.length === 0) return;
  if (kinds.length === 0) throw new UsageError(`--keep-solved-type: the decision points of ${source.description} have no question types (a benchmark's, with --bench)`);
  throw new UsageError(`--keep-solved-type: ${unknown.join(", ")} ${unknown.length > 1 ? "are not question types" : "is not a question type"} of ${source.description}; its types: ${kinds.join(", ")}`);
}

/** The trainer's config from the command line (only what was given; the schema fills the defaults). */
export function configFromArgs(a: Args): GrpoConfigInput {
  const pick: [keyof Args, keyof GrpoConfigInput][] = [
    ["steps", "steps"], ["prompts", "prompts"], ["group-size", "groupSize"], ["temperature", "temperature"], ["top-k", "topK"], ["top-p", "topP"], ["constrain", "constrain"], ["generation", "generation"], ["credit", "credit"],
    ["max-new-tokens", "maxNewTokens"], ["epochs", "epochs"], ["mini-batch", "miniBatch"], ["micro-batch", "microBatch"], ["advantage", "advantage"], ["advantage-std", "advantageStd"],
    ["advantage-eps", "advantageEps"], ["clip-low", "clipLow"], ["clip-high", "clipHigh"], ["dual-clip", "dualClip"], ["loss-agg", "lossAggregation"],
    ["kl", "klCoef"], ["kl-estimator", "klEstimator"], ["kl-in", "klIn"], ["entropy", "entropyCoef"], ["max-rollout-batches", "maxRolloutBatches"],
    ["overlong-buffer", "overlongBuffer"], ["overlong-penalty", "overlongPenalty"], ["format-failure", "formatFailure"], ["leak-penalty", "leakPenalty"], ["lr", "lr"], ["min-lr", "minLr"],
    ["warmup", "warmupSteps"], ["schedule-steps", "scheduleSteps"], ["weight-decay", "weightDecay"], ["beta1", "beta1"], ["beta2", "beta2"], ["grad-clip", "gradClip"], ["seed", "seed"], ["keep-solved", "keepSolved"],
    ["thinking-steps", "thinkingSteps"], ["tau", "tau"], ["balance", "balance"],
  ];
  const c: Record<string, unknown> = { ...(a.preset ? GRPO_PRESETS[a.preset as GrpoPresetName].config : {}) };
  for (const [from, to] of pick) if (a[from] !== undefined) c[to] = a[from];
  if (a["dynamic-sampling"]) c.dynamicSampling = true;
  if (a["skip-solved"]) c.skipSolved = true;
  if (a["mask-truncated"]) c.maskTruncated = true;
  if (a.soft) {
    c.soft = true;
    // SofT-GRPO's soft tokens keep the 0.9 nucleus unless told otherwise (the whole vocabulary would make every soft token a mixture of all of it).
    if (a["top-p"] === undefined) c.topP = 0.9;
  } else if (a["thinking-steps"] !== undefined || a.tau !== undefined) {
    throw new UsageError("--thinking-steps and --tau are settings of soft thinking: add --soft");
  }
  if (a.reward) c.rewards = parseRewardWeights(a.reward);
  if (a["keep-solved-type"]) c.keepSolvedByKind = parseKeepSolvedByType(a["keep-solved-type"]);
  return c as GrpoConfigInput;
}

export async function grpoCommand(argv: readonly string[]): Promise<number> {
  // The world's own flags (the social prompt's facts) are declared by the world: read from the one named.
  const { args: a, flags: benchFlags } = await parseWithFlags(argv, Args, ["world", "bench"]);
  const preset: GrpoPreset | undefined = a.preset ? GRPO_PRESETS[a.preset as GrpoPresetName] : undefined;
  // --resume off: start afresh even where the preset resumes (OUT's former checkpoints go).
  const afresh = a.resume === "off";
  const fromPreset = a.resume === undefined && preset?.resume !== undefined;
  const resume = afresh ? undefined : a.resume ?? preset?.resume;
  if (!a.model && !resume) throw new UsageError("--model DIR is required (the policy to start from)");
  if (!a.world === !a.bench) throw new UsageError("give exactly one of --world NAME and --bench NAME --data FILE");
  if (a.bench && !a.data) throw new UsageError("--bench needs --data FILE");
  if (a.world && a.data) throw new UsageError("--data goes with --bench, not --world");
  for (const keep of ["keep-solved", "keep-solved-type"] as const) {
    if (a[keep] !== undefined && !a["skip-solved"]) throw new UsageError(`--${keep} goes with --skip-solved (it keeps a share of the points that leaves out)`);
  }
  const parsed = GrpoConfigSchema.safeParse(configFromArgs(a));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`${issue.path.join(".") || "options"}: ${issue.message}`);
  }
  const config = parsed.data;
  if (config.rewards.trace > 0 && !isWrittenSource(a.context)) throw new UsageError("--reward trace=W weighs a written context's trace: it goes with --context self or self-latest");
  const lora = loraArg(a.lora ?? preset?.lora);
  if (lora && !a.model) {
    const why = a.lora === undefined ? `--preset ${a.preset} trains a LoRA adapter (${preset?.lora}), which` : "--lora";
    throw new UsageError(`${why} needs --model DIR, the base model (also when resuming)`);
  }
  if (a.threads) loadNative().setThreads(a.threads);
  await useDevice(a);
  await useCheckpointing(a);

  if (preset?.unsupported) process.stderr.write(`note: --preset ${a.preset} leaves out ${preset.unsupported}\n`);
  const store = await RunStore.open(a.store);
  const source = await pointsOf(a, store.root, benchFlags);
  // Without this the trainer would only find out after the first rollouts, with a run already in the store.
  const levelled = config.generation === "per-level" ? "--generation per-level" : config.credit === "level" ? "--credit level" : undefined;
  if (levelled && source.size > 0 && !(await source.point(0)).levels) {
    throw new UsageError(`${levelled}: ${source.description} has no answers written in levels (usersim's hierarchy); it goes with --world usersim or --bench usersim`);
  }
  if (a["keep-solved-type"]) checkKeepSolvedTypes(a["keep-solved-type"], source);
  const token = a["admin-token"] ?? process.env.SOCIALWORLD_ADMIN_TOKEN;
  if (a.server && !token) throw new UsageError("--server needs --admin-token T (or $SOCIALWORLD_ADMIN_TOKEN)");
  const publisher = a.server ? new MetricsPublisher(a.server, token!, (msg) => process.stderr.write(`note: ${msg}\n`)) : undefined;

  const progress = new Progress("grpo", config.steps, a.quiet ? null : process.stderr);
  const filterBar = new Progress("greedy pass (skip solved)", source.size, a.quiet ? null : process.stderr);
  const controller = new AbortController();
  const signals = onStopSignal(() => controller.abort());
  let runId: string | null = null;
  let warnedTooLong = false;
  let startStep = 0;
  try {
    const r = await runGrpoSession({
      out: resolve(a.out),
      ...(a.model ? { model: a.model } : {}),
      ...(lora ? { lora } : {}),
      source,
      config,
      ...(resume ? { resume } : {}),
      ...(afresh ? { afresh } : {}),
      saveEvery: a["save-every"],
      keep: a.keep,
      store,
      signal: controller.signal,
      onFilter: (done) => filterBar.update(done),
      onStart: (info) => {
        if (config.skipSolved) filterBar.finish();
        runId = info.runId;
        startStep = info.startStep;
        if (info.resumedFrom) process.stderr.write(`resuming from ${info.resumedFrom} (step ${info.startStep} of ${config.steps})\n`);
        process.stderr.write(`${info.trainable}\n`);
        process.stderr.write(`${info.source}; rollouts logged as run ${info.runId} in the store ${store.root}\n`);
        progress.update(info.startStep);
      },
      onStep: (m: StepMetrics) => {
        if (m.tooLong && !warnedTooLong) {
          warnedTooLong = true;
          process.stderr.write(`\nnote: ${m.tooLong} decision point(s) of step ${m.step} left out: prompt + --max-new-tokens ${config.maxNewTokens} exceed the model's max_position_embeddings\n`);
        }
        progress.update(m.step, progressNote(m));
        publisher?.publish({ runId: runId ?? a.out, title: `GRPO ${resolve(a.out)}`, source: source.description, steps: config.steps, metrics: m });
      },
    });
    progress.finish();
    await publisher?.finish(runId ?? a.out, r.interrupted ? "interrupted" : "done");
    if (r.interrupted) {
      process.stderr.write(`interrupted after step ${r.steps}: checkpoint saved; continue with --resume auto\n`);
      return signals.exitCode;
    }
    const m = r.last;
    if (r.steps === startStep) {
      process.stdout.write(`already at step ${r.steps} of ${config.steps}: nothing to train; ${resolve(a.out)} is unchanged\n`);
      return 0;
    }
    process.stdout.write(
      `trained ${r.steps - startStep} GRPO steps${startStep ? ` (${startStep + 1}-${r.steps})` : ""} on ${source.description}` +
        (m ? `: last reward ${m.reward.toFixed(3)}, accuracy ${(100 * m.accuracy).toFixed(1)}%` : "") +
        `; ${lora ? "LoRA adapter (PEFT layout)" : "model"} in ${resolve(a.out)}; rollouts in run ${r.runId}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof SettingsMismatch && fromPreset) {
      throw new UsageError(`--preset ${a.preset} resumes OUT's latest checkpoint (resume ${preset?.resume}): ${err.message}; or give another --out, or --resume off to start afresh in ${a.out}`);
    }
    if (err instanceof SettingsMismatch) throw new UsageError(`--resume: ${err.message}`);
    if (err instanceof FolderInUse) throw new UsageError(`--out: ${err.message}`);
    if (err instanceof PromptsTooLong) throw new UsageError(err.message);
    throw err;
  } finally {
    signals.dispose();
  }
}

/** Where the decision points come from: a benchmark file, a graded world's generated records, a world's own generated set (`trainOn: "generated"`), or a world's scripted episodes. */
async function pointsOf(a: z.infer<typeof Args>, storeRoot: string, flags: BenchmarkOptions["flags"]): Promise<PointSource> {
  // `--context self` (self-latest) says who writes the context (the trainer's), not a benchmark's prompt option.
  const self = isWrittenSource(a.context) ? a.context : undefined;
  if (self && !a.bench) throw new UsageError(`--context ${self} goes with --bench tomi --mode simulation (the policy writes the story's context, then answers)`);
  const given = { hierarchy: a.hierarchy, weights: a.weights, split: a.split, embedder: a.embedder, context: self ? undefined : a.context, flags };
  const options: BenchmarkOptions = {
    ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)),
    ...(a.judge !== undefined ? { judgeModel: await judgeModelArg(a.judge) } : {}),
  };
  const common = { ...(a.limit !== undefined ? { limit: a.limit } : {}), ...(a.system ? { system: a.system } : {}) };
  try {
    if (a.bench) return await BenchPoints.open(a.bench, resolve(a.data!), a.mode as Mode, { ...common, options, ...(self ? { context: self } : {}) });
    const name = a.world!;
    const world = await loadWorld(name);
    // A world that scores any action itself (economy) gives decision points of its own.
    if (world.decisions) {
      if (a.episodes !== undefined) throw new UsageError(`--episodes: the ${name} world gives decision points of its own: ask for --points N`);
      return await ScoredPoints.open(name, a.points ?? 2000, a["world-seed"], a.system);
    }
    if (a.points !== undefined) throw new UsageError(`--points: the ${name} world has no decision points of its own: ask for --episodes N of its scripted episodes`);
    const episodes = a.episodes ?? 200;
    const graded = world.benchmark && world.generator ? (await loadBenchmark(name, options)).graded !== undefined : false;
    if (graded) {
      const data = await generatedRecords(storeRoot, name, world.generator!, episodes, a["world-seed"]);
      return await BenchPoints.open(name, data, a.mode as Mode, { ...common, options: { ...options, split: options.split ?? "train" } });
    }
    // A world that trains on its generator's set, judged by its benchmark's reward (social): the set
    // is kept in OUT, asked with the benchmark's options (the social prompt's --context).
    if (world.trainOn === "generated") return await generatedPoints(name, episodes, a["world-seed"], a.out, { mode: a.mode as Mode, options, ...(a.system ? { system: a.system } : {}) });
    const extra = [...Object.keys(options).filter((k) => k !== "flags").map((k) => flagOf(k as keyof BenchmarkOptions)), ...Object.keys(options.flags ?? {})];
    if (extra.length) throw new UsageError(`--${extra[0]} goes with a graded benchmark (usersim) or a world trained on its generator's set (social), not with ${name}'s scripted episodes`);
    return await WorldPoints.scripted(name, episodes, a["world-seed"], a.system);
  } catch (err) {
    if (err instanceof BenchmarkOptionError || err instanceof RegistryError) throw new UsageError(err.message);
    if (err instanceof WrittenContextUnavailable) throw new UsageError(`--${err.message}`);
    throw err;
  }
}

/** A graded world's generated records, written once under the store (the same N and seed, the same file). */
async function generatedRecords(storeRoot: string, world: string, generator: Generator, n: number, seed: number): Promise<string> {
  const out = join(storeRoot, "generated", `${world}-n${n}-seed${seed}.jsonl`);
  if (existsSync(out)) return out;
  mkdirSync(dirname(out), { recursive: true });
  const set = await generator.generate(n, seed, out);
  for (const file of set.files) writeFileAtomic(file.path, file.text);
  return set.data;
}
