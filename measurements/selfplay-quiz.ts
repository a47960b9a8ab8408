/**
 * Self-play that learns from outcomes, measured: a small policy SFT'd quickly on generated ToMi
 * stories plays every seat of a looping ToMi room on a live server; the room quizzes its seats at
 * each episode's end (questions about that episode, labelled by the world model), and its
 * self-play schedule trains the policy every few episodes with GRPO on those quiz questions
 * (reward: exact match with the world model's label), then plays the new round from the next
 * episode on. Each round's policy is scored on the quizzes of the episodes it played itself: new
 * episodes, which no round had trained on when it answered. The script prints
 * `| round | episodes | quiz accuracy on new episodes | wall time |` (also OUT/results.md).
 *
 *   node dist/measurements/selfplay-quiz.js [--out DIR] [--rounds N] [--episodes N] [--sft-steps N]
 *       [--train-questions N] [--round-steps N] [--round-lr X] [--round-kl X] [--act-temperature T] [--seed S] [--start DIR]
 *
 * Every stage is the project's command line (`generate`, `model init`, `train sft`, `serve`) and
 * its HTTP API, as a user would run them. Not a test.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg, numArg } from "../cli/args.js";
import { packageRoot } from "../worlds/question/prompts.js";
import type { QuizAccuracyPoint, TrainingRun } from "../server/training-board.js";
import { socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { recipeSft, recipeSftData } from "./learn-recipe.js";
import { scriptArgs } from "./script-args.js";
import { freePort, startServe, stopServe } from "./server-process.js";

const USAGE = `node dist/measurements/selfplay-quiz.js [options]   (or: npm run demo:selfplay -- [options])

Trains a small policy on generated ToMi stories (SFT), lets it play a looping ToMi room that quizzes
its seats after every episode and trains it by self-play on those quiz questions, and prints each
round's accuracy on the quizzes of new episodes (OUT/results.md too).

Options:
  --out DIR               where the data, models, store and results go (default data/selfplay-demo)
  --rounds N              self-play rounds to measure after the starting policy (default 5)
  --episodes N            episodes per round: the room trains after every N (default 10)
  --sft-steps N           SFT optimizer steps (batch 32) of the starting policy (default 300)
  --train-questions N     generated ToMi questions the starting policy is SFT'd on (default 4000)
  --round-steps N         GRPO steps of each self-play round (default 6)
  --round-lr X            learning rate of each self-play round (default 3e-5)
  --round-kl X            KL coefficient to the round's starting policy (default 0.01)
  --act-temperature T     temperature the seats act at, among the valid actions (default 1)
  --seed S                seed of every stage (default 1)
  --start DIR             start from this policy checkpoint instead (no generate, no SFT)
  --timeout-minutes M     give up after M minutes of self-play (default 40)
  --help                  this text`;

const values = scriptArgs({
  name: "selfplay-quiz",
  usage: USAGE,
  schema: z.object({
    out: z.string().default(join(packageRoot(), "data", "selfplay-demo")),
    rounds: intArg(1, 50).default(5),
    episodes: intArg(1, 1000).default(10),
    "sft-steps": intArg(1).default(300),
    "train-questions": intArg(6).default(4000),
    "round-steps": intArg(1, 1000).default(6),
    "round-lr": numArg().positive().max(1).default(3e-5),
    "round-kl": numArg().min(0).max(10).default(0.01),
    "act-temperature": numArg().min(0).max(10).default(1),
    seed: intArg(0, 2 ** 32 - 1).default(1),
    start: z.string().min(1).optional(),
    "timeout-minutes": intArg(1).default(40),
  }),
});

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const seed = String(values.seed);
const timings: StageTiming[] = [];
const run = (stage: string, args: string[]) => socialworld(stage, args, timings);
const started = performance.now();

// 1. The starting policy: SFT on generated ToMi questions, asked as a room's quiz asks them (the vanilla prompt).
const sft = values.start !== undefined ? resolve(values.start) : await startingPolicy();

async function startingPolicy(): Promise<string> {
  const { sftFile } = await recipeSftData(out, { questions: values["train-questions"], seed: values.seed, modes: ["vanilla"], timings });
  return (await recipeSft(run, out, { sftFile, steps: values["sft-steps"], seed: values.seed })).sft;
}

// 2. Self-play in a live room, through the server's API.
const store = join(out, "store");
rmSync(store, { recursive: true, force: true });
const admin = randomBytes(24).toString("hex");
const port = await freePort();
const server = await startServe(port, store, admin, (text) => process.stderr.write(text.replace(/^/gm, "[serve] ")));
/** A request to the server; a dropped connection is tried again (a round's update can keep the server busy for a while on a loaded machine). */
const api = async <T>(path: string, body?: unknown, tries = 30): Promise<T> => {
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    if (tries <= 1) throw err;
    await new Promise((r) => setTimeout(r, 2000));
    return api(path, body, tries - 1);
  }
  const json = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(`${path}: ${res.status} ${json.error ?? ""}`);
  return json;
};

const pool = "selfplay-demo";
const E = values.episodes;
const roomOptions = {
  world: "tomi",
  seed: values.seed,
  loop: true,
  tickMs: 0,
  // A breath between episodes: the room and the round's training share the machine.
  pauseMs: 1000,
  title: "self-play demo",
  // Every seat is the policy. It acts by sampling (temperature 1) among the actions the world
  // allows (constrain=options: every action valid, every option reachable), so that agents enter,
  // move things and leave while others are away: stories with false beliefs, never the same twice.
  // It answers its quiz greedily (answer_temperature 0) among the story's containers: the curve
  // measures what each round's policy knows, not how its samples fell. No turn is trained on:
  // the story's script plays no part, and nothing rewards acting like it.
  defaultAgent: `policy:${sft}?max_new_tokens=8&constrain=options&temperature=${values["act-temperature"]}&answer_temperature=0`,
  quiz: { questions: 3, deadlineMs: 60_000 },
  selfPlay: {
    pool,
    everyEpisodes: E,
    // Each round learns from the episodes played since the last one, and ToMi pays no reward of
    // its own: under the action grammar every turn is valid, so the turns would teach nothing.
    recentEpisodes: E,
    turns: false,
    // Dynamic sampling: a group whose replies all got the same reward (all right, or all wrong)
    // has no advantage; the round samples more questions until each step's groups can teach.
    trainer: {
      steps: values["round-steps"], prompts: 8, groupSize: 8, maxNewTokens: 8, temperature: 1, lr: values["round-lr"], klCoef: values["round-kl"], clipHigh: 0.28, constrain: "options",
      lossAggregation: "token-mean", dynamicSampling: true, maxRolloutBatches: 3, seed: values.seed,
    },
  },
};
const t0 = performance.now();
const elapsed = () => (performance.now() - t0) / 1000;
const clock = (s: number) => `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
/** When each round's policy began to play (round 0: when the room opened). */
const live = new Map<number, number>([[0, 0]]);
let curve: QuizAccuracyPoint[] = [];
let failure: string | undefined;
try {
  const room = await api<{ roomId: string }>("/api/rooms", { type: "simulation", options: roomOptions });
  process.stderr.write(`\n[self-play] room ${room.roomId}: a round every ${E} episodes, ${values.rounds} rounds\n`);
  const deadline = Date.now() + values["timeout-minutes"] * 60_000;
  const measured = () => curve.filter((q) => q.episodes >= E).length;
  while (measured() < values.rounds + 1) {
    if (Date.now() > deadline) {
      failure = `gave up after ${values["timeout-minutes"]} minutes of self-play`;
      break;
    }
    await new Promise((r) => setTimeout(r, 2000));
    const runs = (await api<{ runs: TrainingRun[] }>("/api/training")).runs.filter((r) => r.title.startsWith(`Self-play ${pool}:`));
    for (const r of runs) if (r.status === "done" && r.round !== undefined && !live.has(r.round)) live.set(r.round, elapsed());
    const failed = runs.find((r) => r.status === "failed");
    if (failed) {
      failure = `${failed.title} failed (the server's log says why)`;
      break;
    }
    const latest = runs.sort((a, b) => (b.round ?? 0) - (a.round ?? 0))[0];
    if (latest?.quizAccuracy) curve = latest.quizAccuracy;
    const last = curve.at(-1);
    if (last) process.stderr.write(`\r[self-play] ${clock(elapsed())}: round ${last.round} ${last.correct}/${last.questions} on ${last.episodes} episode(s)   `);
  }
} finally {
  await stopServe(server);
}
timings.push({ stage: "self-play", seconds: elapsed() });

const rows = curve.filter((q) => q.round <= values.rounds);
const load = loadavg().map((l) => l.toFixed(1)).join(", ");
const text = [
  values.start !== undefined
    ? `Self-play on ToMi from ${sft}, seed ${seed};`
    : `Self-play on ToMi: policy preset 1m (word tokenizer) SFT'd ${values["sft-steps"]} steps at batch 32 on ${values["train-questions"]} generated questions (the learning recipe, vanilla prompt), seed ${seed};`,
  `a round of GRPO (${values["round-steps"]} steps, lr ${values["round-lr"]}, KL ${values["round-kl"]}, dynamic sampling, answers among the story's containers) on the quiz questions (3 per seat) of every ${E} episodes,`,
  `seats acting at temperature ${values["act-temperature"]} among the valid actions; each round's policy scored (greedy answers) on the quizzes of the episodes it played:`,
  "",
  "| round | episodes | quiz accuracy on new episodes | wall time |",
  "|--:|--:|--:|--:|",
  ...rows.map((q) => `| ${q.round} | ${q.episodes} | ${(100 * q.accuracy).toFixed(1)}% (${q.correct}/${q.questions}) | ${live.has(q.round) ? clock(live.get(q.round)!) : "–"} |`),
  "",
  "Wall time: since the room opened, when the round's policy began to play.",
  wallTimeLine((performance.now() - started) / 1000, timings),
  `Load average at the end (1, 5, 15 min): ${load}.`,
  ...(failure ? ["", `Incomplete: ${failure}.`] : []),
  "",
].join("\n");
writeFileSync(join(out, "results.md"), text);
process.stdout.write("\n\n" + text);
if (failure) process.exitCode = 1;
