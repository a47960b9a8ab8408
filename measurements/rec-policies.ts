/**
 * The policies of the recommendation table (issue 34): SFT, then GRPO and SofT-GRPO from that
 * SFT policy with the same budget, each weighing pop, item-kNN, BPR and SASRec per user as
 * `train grpo --world rec` asks it to. Every stage is the command line in a child process
 * (cli-process.ts), as a user runs it; a stage whose folder was finished with the same command
 * before is kept (its marker, `OUT/<stage>.done.json`, holds the command), so an interrupted table
 * resumes where it stopped.
 *
 * SFT data: the world's own decision points (recDecisionsWithSasrec, the users `train grpo`
 * trains on), each observation answered with its best grid weights, keeping only users whose valid
 * item some grid mixture ranks in the top 10 (for the rest every mixture scores 0, and the "best"
 * is the grid's first point, pop alone: a label that says nothing).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recDecisionsWithSasrec } from "../trainers/rec/decisions.js";
import { socialworld, type StageTiming } from "./cli-process.js";

export interface RecPolicySettings {
  readonly out: string;
  /** Generated users the policies train on (their valid items; the default catalogue). */
  readonly points: number;
  readonly seed: number;
  readonly preset: string;
  readonly sftSteps: number;
  readonly grpoSteps: number;
  readonly prompts: number;
  readonly groupSize: number;
  readonly lr: number;
  readonly thinkingSteps: number;
  readonly threads?: number;
}

/** One GRPO step as metrics.jsonl records it. */
export interface StepLine {
  readonly step: number;
  readonly reward: number;
  readonly rewardStd?: number;
  readonly accuracy: number;
  readonly seconds: number;
}

export interface TrainedPolicies {
  readonly sft: string;
  readonly grpo: string;
  readonly softGrpo: string;
  /** Kept SFT examples and the decision points they came from. */
  readonly sftExamples: number;
  readonly curves: { readonly GRPO: readonly StepLine[]; readonly "SofT-GRPO": readonly StepLine[] };
}

export async function trainRecPolicies(s: RecPolicySettings, timings: StageTiming[]): Promise<TrainedPolicies> {
  mkdirSync(s.out, { recursive: true });
  const seed = String(s.seed);
  const threads = s.threads ? ["--threads", String(s.threads)] : [];
  const stage = async (name: string, dir: string, args: string[]) => {
    const marker = `${dir}.done.json`;
    const done = existsSync(marker) && existsSync(join(dir, "config.json")) && readFileSync(marker, "utf8") === JSON.stringify(args);
    if (done) return void process.stderr.write(`\n[${name}] kept ${dir} (trained with the same command before)\n`);
    await socialworld(name, args, timings);
    writeFileSync(marker, JSON.stringify(args));
  };

  const sftFile = join(s.out, `sft-${s.points}-seed${s.seed}.jsonl`);
  let sftExamples: number;
  if (existsSync(sftFile)) sftExamples = readFileSync(sftFile, "utf8").split("\n").filter(Boolean).length;
  else {
    const t0 = performance.now();
    process.stderr.write(`\n[data] ${s.points} decision points of the rec world (seed ${s.seed}), recallers fitted on their training items\n`);
    const points = await recDecisionsWithSasrec.points(s.points, s.seed);
    const kept = points.filter((p) => p.reward(p.best) > 0);
    sftExamples = kept.length;
    writeFileSync(sftFile, kept.map((p) => JSON.stringify({ prompt: p.observation, response: p.render(p.best) })).join("\n") + "\n");
    timings.push({ stage: "data", seconds: (performance.now() - t0) / 1000 });
  }

  const base = join(s.out, "base");
  const sft = join(s.out, "sft");
  await stage("base", base, ["model", "init", "--preset", s.preset, "--corpus", sftFile, "--seed", seed, "--out", base, "--force"]);
  await stage("SFT", sft, [
    "train", "sft", "--model", base, "--data", sftFile, "--out", sft, "--steps", String(s.sftSteps), "--batch", "16",
    "--lr", "3e-3", "--min-lr", "3e-4", "--warmup", "20", "--seed", seed, "--save-every", "100000", ...threads,
  ]);
  // The same budget for both: points, steps, prompts, group size, learning rate, KL, clip, seed.
  const grpoArgs = (dir: string) => [
    "train", "grpo", "--model", sft, "--world", "rec", "--points", String(s.points), "--world-seed", seed, "--out", dir, "--store", join(s.out, "store"),
    "--steps", String(s.grpoSteps), "--prompts", String(s.prompts), "--group-size", String(s.groupSize), "--max-new-tokens", "64", "--temperature", "1",
    "--lr", String(s.lr), "--kl", "0.01", "--clip-low", "0.2", "--clip-high", "0.2", "--seed", seed, "--save-every", "100000", "--quiet", ...threads,
  ];
  const grpo = join(s.out, "grpo");
  const softGrpo = join(s.out, "soft-grpo");
  await stage("GRPO", grpo, grpoArgs(grpo));
  await stage("SofT-GRPO", softGrpo, [...grpoArgs(softGrpo), "--soft", "--thinking-steps", String(s.thinkingSteps), "--tau", "1", "--top-p", "0.9"]);
  return { sft, grpo, softGrpo, sftExamples, curves: { GRPO: stepLines(grpo), "SofT-GRPO": stepLines(softGrpo) } };
}

function stepLines(dir: string): StepLine[] {
  return readFileSync(join(dir, "metrics.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StepLine);
}
