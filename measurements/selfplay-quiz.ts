/**
 * Self-play that learns from outcomes, measured: a small policy SFT'd on generated ToMi stories
 * plays every seat of a looping ToMi room on a live server; the room quizzes its seats at each
 * episode's end (questions about that episode, labelled by the world model), and its self-play
 * schedule trains the policy every few episodes with GRPO on those quiz questions (reward: exact
 * match with the world model's label), then plays the new round from the next episode on.
 *
 * Each round's policy is scored on held-out episodes: before self-play, a room of the starting
 * policy plays `--eval-episodes` episodes from seeds no training episode has (`--eval-seed`), and
 * `socialworld questions` writes their questions; after self-play, `socialworld bench` asks every
 * round's policy those same questions, greedily, as the quiz asks them. The same questions for
 * every round: the rows differ by what the policies learned, not by which stories came up. The
 * quiz of the episodes each round played itself (new to it, but its own stories) is printed
 * beside them, and so is the training board's own held-out curve: the room holds out its first
 * `--board-held-out` quizzed episodes (the `heldOutEpisodes` option) and scores every round on
 * them itself. The script prints
 * `| round | held-out quiz accuracy [95% Wilson] | the board's held-out | own episodes' quiz | reward signal |` (OUT/results.md, OUT/curve.svg).
 *
 *   node dist/measurements/selfplay-quiz.js [--out DIR] [--rounds N] [--episodes N] [--quiz-questions N]
 *       [--eval-episodes N] [--eval-questions N] [--eval-seed S] [--sft-steps N] [--train-questions N]
 *       [--round-steps N] [--round-lr X] [--round-kl X] [--round-prompts N] [--round-temperature T] [--round-advantage grpo|rft] [--round-balance none|type] [--round-continue] [--round-warmup N] [--round-min-lr X] [--round-recent N] [--act-temperature T] [--max-steps N] [--seed S] [--start DIR] [--threads N]
 *
 * Every stage is the project's command line (`generate`, `model init`, `train sft`, `serve`,
 * `questions`, `bench`) and its HTTP API, as a user would run them. Not a test.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg, numArg } from "../cli/args.js";
import { packageRoot } from "../worlds/question/prompts.js";
import type { BenchReport } from "../benchmarks/report.js";
import { bootstrapInterval } from "../benchmarks/episode-bootstrap.js";
import { pairedChange } from "../benchmarks/paired-change.js";
import { accuracyCell, wilsonInterval } from "../benchmarks/wilson-interval.js";
import { MAX_QUIZ_QUESTIONS } from "../server/rooms/options.js";
import { ADVANTAGE_ESTIMATORS, POINT_BALANCES } from "../trainers/grpo/config.js";
import type { RoomSummary } from "../server/protocol.js";
import type { HeldOutPoint, QuizAccuracyPoint, TrainingRun } from "../server/training-board.js";
import { clock, socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { recipeSft, recipeSftData } from "./learn-recipe.js";
import { linePlot } from "./line-plot.js";
import { writeResults } from "./results-file.js";
import { BELIEF_ORDERS, beliefDiscrimination } from "./belief-discrimination.js";
import { scriptArgs } from "./script-args.js";
import { scheduleProblem, selfPlaySchedule } from "./selfplay-trainer.js";
import { freePort, startServe, stopServe } from "./server-process.js";

const USAGE = `node dist/measurements/selfplay-quiz.js [options]   (or: npm run demo:selfplay -- [options])

Trains a small policy on generated ToMi stories (SFT), lets it play a looping ToMi room that quizzes
its seats after every episode and trains it by self-play on those quiz questions, and prints each
round's accuracy on the questions of held-out episodes (seeds no training episode has), with its
95% Wilson interval (OUT/results.md, OUT/curve.svg too).

Options:
  --out DIR               where the data, models, stores and results go (default data/selfplay-demo)
  --rounds N              self-play rounds to measure after the starting policy (default 5)
  --episodes N            episodes per round: the room trains after every N (default 10)
  --quiz-questions N      quiz questions per seat per episode, 1-${MAX_QUIZ_QUESTIONS} (default 3)
  --eval-episodes N       held-out episodes the rounds are scored on (default 30)
  --eval-questions N      at most this many of their questions, drawn with --seed (default: all)
  --eval-seed S           the held-out episodes' first seed (default --seed + 1000000)
  --board-held-out N      the self-play room holds out its first N quizzed episodes, never trained on,
                          and the training board scores every round on them (default 20; 0: none)
  --sft-steps N           SFT optimizer steps (batch 32) of the starting policy (default 300)
  --train-questions N     generated ToMi questions the starting policy is SFT'd on (default 4000)
  --round-steps N         GRPO steps of each self-play round (default 6)
  --round-lr X            learning rate of each self-play round (default 3e-5)
  --round-kl X            KL coefficient to the round's starting policy (default 0.01)
  --round-prompts N       questions a GRPO step samples replies to (default 8)
  --round-temperature T   temperature the rounds sample replies at (default 1)
  --round-advantage E     the rounds' advantage estimator: grpo, or rft (rejection-sampling
                          fine-tuning: the right replies of a group share its weight) (default grpo)
  --round-balance B       how the rounds draw questions: none (as they come), or type (every question
                          type in equal shares) (default none)
  --round-continue        each round goes on from the previous round's trainer state (AdamW moments,
                          update count, step and data position: the room's continueTraining) instead
                          of a new optimizer from its weights
  --round-warmup N        warmup updates of the learning rate (default 0): in every round, or with
                          --round-continue once, over the pool's first updates
  --round-min-lr X        decay the learning rate to X (cosine): over each round, or with
                          --round-continue over all --rounds rounds' updates (default: no decay)
  --round-recent N        a round learns from the quiz questions of the latest N episodes (default
                          --episodes: those since the last round)
  --act-temperature T     temperature the seats act at, among the valid actions (default 1)
  --max-steps N           end each episode after N timesteps (the rooms' maxSteps; default: the story's
                          script, about 8 timesteps: stories of about 20 lines in free play)
  --seed S                seed of every stage (default 1)
  --start DIR             start from this policy checkpoint instead (no generate, no SFT; never written to)
  --threads N             CPU threads of the server's and bench's native engine (default: one per core)
  --timeout-minutes M     give up after M minutes of self-play (default 40)
  --help                  this text`;

const values = scriptArgs({
  name: "selfplay-quiz",
  usage: USAGE,
  schema: z.object({
    out: z.string().default(join(packageRoot(), "data", "selfplay-demo")),
    rounds: intArg(1, 50).default(5),
    episodes: intArg(1, 1000).default(10),
    "quiz-questions": intArg(1, MAX_QUIZ_QUESTIONS).default(3),
    "eval-episodes": intArg(1, 10_000).default(30),
    "eval-questions": intArg(1).optional(),
    "eval-seed": intArg(0, 2 ** 32 - 1).optional(),
    "board-held-out": intArg(0, 1000).default(20),
    "sft-steps": intArg(1).default(300),
    "train-questions": intArg(6).default(4000),
    "round-steps": intArg(1, 1000).default(6),
    "round-lr": numArg().positive().max(1).default(3e-5),
    "round-kl": numArg().min(0).max(10).default(0.01),
    "round-prompts": intArg(1, 256).default(8),
    "round-temperature": numArg().positive().max(10).default(1),
    "round-advantage": z.enum(ADVANTAGE_ESTIMATORS).default("grpo"),
    "round-balance": z.enum(POINT_BALANCES).default("none"),
    "round-continue": z.boolean().default(false),
    "round-warmup": intArg(0, 100_000).default(0),
    "round-min-lr": numArg().min(0).max(1).optional(),
    "round-recent": intArg(1, 10_000).optional(),
    "act-temperature": numArg().min(0).max(10).default(1),
    "max-steps": intArg(1, 100_000).optional(),
    seed: intArg(0, 2 ** 32 - 1).default(1),
    start: z.string().min(1).optional(),
    threads: intArg(1, 1024).optional(),
    "timeout-minutes": intArg(1).default(40),
  }).superRefine((v, ctx) => {
    const p = scheduleProblem({ rounds: v.rounds, steps: v["round-steps"], continue: v["round-continue"], lr: v["round-lr"], minLr: v["round-min-lr"], warmup: v["round-warmup"] });
    if (p) ctx.addIssue({ code: "custom", message: p.message, path: [p.option] });
  }),
});

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const seed = String(values.seed);
const evalSeed = values["eval-seed"] ?? (values.seed + 1_000_000) % 2 ** 32;
const threads = values.threads === undefined ? [] : ["--threads", String(values.threads)];
const timings: StageTiming[] = [];
const run = (stage: string, args: string[]) => socialworld(stage, args, timings);
const started = performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// 1. The starting policy: SFT on generated ToMi questions, asked as a room's quiz asks them (the vanilla prompt).
const sft = values.start !== undefined ? resolve(values.start) : await startingPolicy();

async function startingPolicy(): Promise<string> {
  const { sftFile } = await recipeSftData(out, { questions: values["train-questions"], seed: values.seed, modes: ["vanilla"], timings });
  return (await recipeSft(run, out, { sftFile, steps: values["sft-steps"], seed: values.seed })).sft;
}

/** Both rooms' episode length: the held-out stories are told as the training room's are. */
const maxSteps = values["max-steps"] === undefined ? {} : { maxSteps: values["max-steps"] };

/**
 * How every seat plays `dir`: it acts by sampling (`--act-temperature`) among the actions the world
 * allows (constrain=options: every action valid, every option reachable), so that agents enter,
 * move things and leave while others are away: stories with false beliefs, never the same twice.
 * It answers its quiz greedily (answer_temperature 0) among the story's containers: the curve
 * measures what each round's policy knows, not how its samples fell.
 */
const seatSpec = (dir: string) => `policy:${dir}?max_new_tokens=8&constrain=options&temperature=${values["act-temperature"]}&answer_temperature=0`;

/** A server of this checkout on a store of its own, and requests to it with the admin token. */
async function server(store: string, tag: string) {
  rmSync(store, { recursive: true, force: true });
  const admin = randomBytes(24).toString("hex");
  const port = await freePort();
  const child = await startServe(port, store, admin, (text) => process.stderr.write(text.replace(/^/gm, `[${tag}] `)), undefined, threads);
  /** A request; a dropped connection is tried again (a round's update can keep the server busy for a while on a loaded machine). */
  const api = async <T>(path: string, body?: unknown, method = body === undefined ? "GET" : "POST", tries = 30): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      if (tries <= 1) throw err;
      await sleep(2000);
      return api(path, body, method, tries - 1);
    }
    const json = (await res.json()) as T & { error?: string };
    if (!res.ok) throw new Error(`${path}: ${res.status} ${json.error ?? ""}`);
    return json;
  };
  return { api, stop: () => stopServe(child) };
}

const deadline = Date.now() + values["timeout-minutes"] * 60_000;
let failure: string | undefined;

// 2. The held-out questions: episodes the starting policy plays from seeds no training episode
// has, and every question the world model can label about them (`socialworld questions`).
const heldOut = await heldOutQuestions();

async function heldOutQuestions(): Promise<{ file: string; episodes: number; played: number; questions: number; types: string }> {
  const t0 = performance.now();
  const store = join(out, "held-out-store");
  const s = await server(store, "held-out");
  let runId: string;
  /** The room played seeds evalSeed .. evalSeed + played - 1 (one more than it said last: it may have begun one since). */
  let played = 0;
  try {
    const room = await s.api<RoomSummary>("/api/rooms", {
      type: "simulation",
      options: { world: "tomi", seed: evalSeed, loop: true, tickMs: 0, pauseMs: 0, title: "held-out episodes", defaultAgent: seatSpec(sft), ...maxSteps },
    });
    runId = room.runId;
    process.stderr.write(`\n[held-out] room ${room.roomId}: ${values["eval-episodes"]} episodes from seed ${evalSeed}\n`);
    // `episode` is the one being played: past --eval-episodes, that many have ended.
    for (let now = room; now.episode <= values["eval-episodes"]; now = await s.api<RoomSummary>(`/api/rooms/${room.roomId}`)) {
      if (Date.now() > deadline) throw new Error(`the held-out episodes took over ${values["timeout-minutes"]} minutes (${now.episode - 1} played)`);
      process.stderr.write(`\r[held-out] ${clock((performance.now() - t0) / 1000)}: episode ${now.episode}   `);
      await sleep(1000);
    }
    played = (await s.api<RoomSummary>(`/api/rooms/${room.roomId}`)).episode + 1;
    await s.api(`/api/rooms/${room.roomId}`, undefined, "DELETE");
  } finally {
    await s.stop();
  }
  timings.push({ stage: "held-out episodes", seconds: (performance.now() - t0) / 1000 });
  const said = await socialworld("held-out questions", [
    "questions", "--run", runId, "--store", store, "--out", join(out, "held-out", "quiz"), "--seed", seed, "--quiet",
    ...(values["eval-questions"] !== undefined ? ["--max", String(values["eval-questions"])] : []),
  ], timings, { stdout: true });
  // "wrote N tomi questions about K episodes of run ID: FILE.txt, FILE.trace\n  type n, ..."
  const m = /wrote (\d+) \w+ questions about (\d+) episodes? of run \S+: ([^,\n]+)[^\n]*\n\s*(.*)/.exec(said);
  if (!m) throw new Error(`socialworld questions said what this script cannot read:\n${said}`);
  return { questions: Number(m[1]), episodes: Number(m[2]), played, file: m[3]!.trim(), types: m[4]!.trim() };
}

// 3. Self-play in a live room, through the server's API.
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
  // Every seat is the policy (seatSpec). No turn is trained on: the story's script plays no
  // part, and nothing rewards acting like it.
  defaultAgent: seatSpec(sft),
  ...maxSteps,
  quiz: { questions: values["quiz-questions"], deadlineMs: 60_000 },
  selfPlay: selfPlaySchedule(pool, {
    rounds: values.rounds, episodes: E, recentEpisodes: values["round-recent"] ?? E, heldOutEpisodes: values["board-held-out"], continue: values["round-continue"],
    steps: values["round-steps"], prompts: values["round-prompts"], temperature: values["round-temperature"], advantage: values["round-advantage"], balance: values["round-balance"],
    lr: values["round-lr"], ...(values["round-min-lr"] !== undefined ? { minLr: values["round-min-lr"] } : {}), warmup: values["round-warmup"], kl: values["round-kl"], seed: values.seed,
  }),
};
const t0 = performance.now();
const elapsed = () => (performance.now() - t0) / 1000;
/** When each round's policy began to play (round 0: when the room opened). */
const live = new Map<number, number>([[0, 0]]);
let curve: QuizAccuracyPoint[] = [];
let boardHeldOut: HeldOutPoint[] = [];
let rounds: TrainingRun[] = [];
let trainingEpisodes = 0;
const sp = await server(join(out, "store"), "serve");
try {
  const room = await sp.api<RoomSummary>("/api/rooms", { type: "simulation", options: roomOptions });
  process.stderr.write(`\n[self-play] room ${room.roomId}: a round every ${E} episodes, ${values.rounds} rounds\n`);
  for (;;) {
    if (Date.now() > deadline) {
      failure = `gave up after ${values["timeout-minutes"]} minutes`;
      break;
    }
    await sleep(2000);
    rounds = (await sp.api<{ runs: TrainingRun[] }>("/api/training")).runs.filter((r) => r.title.startsWith(`Self-play ${pool}:`));
    trainingEpisodes = Math.max(0, (await sp.api<RoomSummary>(`/api/rooms/${room.roomId}`)).episode - 1);
    for (const r of rounds) if (r.status === "done" && r.round !== undefined && !live.has(r.round)) live.set(r.round, elapsed());
    const failed = rounds.find((r) => r.status === "failed");
    if (failed) {
      failure = `${failed.title} failed: ${failed.error ?? "the server's log says why"}`;
      break;
    }
    const latest = rounds.sort((a, b) => (b.round ?? 0) - (a.round ?? 0))[0];
    if (latest?.quizAccuracy) curve = latest.quizAccuracy;
    if (latest?.heldOutAccuracy) boardHeldOut = latest.heldOutAccuracy;
    const done = rounds.filter((r) => r.status === "done").length;
    process.stderr.write(`\r[self-play] ${clock(elapsed())}: ${trainingEpisodes} episodes, ${done}/${values.rounds} rounds trained   `);
    if (done >= values.rounds) break;
  }
} finally {
  await sp.stop();
}
timings.push({ stage: "self-play", seconds: elapsed() });

// The training room played seeds seed .. seed + episodes (the one cut short included): none is held out.
const trainSeeds: [number, number] = [values.seed, values.seed + trainingEpisodes];
const heldSeeds: [number, number] = [evalSeed, evalSeed + heldOut.played - 1];
if (trainSeeds[0] <= heldSeeds[1] && heldSeeds[0] <= trainSeeds[1]) {
  failure = `the held-out seeds ${heldSeeds.join("-")} overlap the training seeds ${trainSeeds.join("-")}: pass another --eval-seed`;
}

// 4. Every round's policy on the held-out questions, as a user runs `bench`.
const policies: [number, string][] = [[0, sft]];
for (const r of rounds) if (r.status === "done" && r.round !== undefined && r.checkpoint) policies.push([r.round, r.checkpoint]);
policies.sort((a, b) => a[0] - b[0]);
const scores = new Map<number, BenchReport>();
const answers = new Map<number, Map<string, { right: boolean; story: string }>>();
const benchStore = join(out, "held-out", "bench-store");
for (const [round, dir] of policies.filter(([k]) => k <= values.rounds)) {
  const json = join(out, "held-out", `round-${round}.json`);
  await run(`held-out round ${round}`, [
    "bench", "tomi", "--data", heldOut.file, "--agent", seatSpec(dir), "--mode", "vanilla", "--concurrency", "16", "--store", benchStore, "--json", json, "--quiet", ...threads,
  ]);
  const report = JSON.parse(readFileSync(json, "utf8")) as BenchReport;
  scores.set(round, report);
  answers.set(round, answersOf(join(benchStore, "runs", report.runId!, "episodes.jsonl")));
}

/** Whether each held-out question (by id) was answered right, and its story, from the bench run's log. */
function answersOf(log: string): Map<string, { right: boolean; story: string }> {
  const right = new Map<string, { right: boolean; story: string }>();
  for (const line of readFileSync(log, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { context_id?: string; result?: { id: string; correct: boolean } };
    if (r.result) right.set(r.result.id, { right: r.result.correct, story: r.context_id ?? r.result.id });
  }
  return right;
}

const rightById = (round: number) => new Map([...answers.get(round)!].map(([id, a]) => [id, a.right]));
/** The held-out accuracy's interval over its stories (episode-bootstrap.ts): the questions about one story are not independent. */
function byStory(round: number): string {
  const stories = new Map<string, { correct: number; total: number }>();
  for (const a of answers.get(round)!.values()) {
    const c = stories.get(a.story) ?? { correct: 0, total: 0 };
    stories.set(a.story, { correct: c.correct + (a.right ? 1 : 0), total: c.total + 1 });
  }
  const i = bootstrapInterval([...stories.values()], { seed: values.seed });
  return `[${(100 * i.low).toFixed(1)}, ${(100 * i.high).toFixed(1)}]`;
}

// 5. The table, the reward signal of each round, and the curve.
const own = new Map(curve.map((q) => [q.round, q]));
const board = new Map(boardHeldOut.map((p) => [p.round, p]));
const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const signal = (round: number): string => {
  const r = rounds.find((x) => x.round === round);
  if (!r || r.history.length === 0) return "–";
  const h = r.history;
  const kept = h.reduce((n, m) => n + (m.groups ?? 0), 0);
  const dropped = h.reduce((n, m) => n + (m.droppedGroups ?? 0), 0);
  const kl = h.at(-1)!.kl;
  return `${h.length} steps, rollouts ${(100 * mean(h.map((m) => m.accuracy))).toFixed(0)}% right, groups kept ${kept}/${kept + dropped}, KL ${kl === null ? "–" : kl.toExponential(1)}`;
};
const types = Object.keys(scores.get(0)?.byType ?? {});
const rows = [...scores.entries()].map(([round, r]) => {
  const q = own.get(round);
  const change = round === 0 ? undefined : pairedChange(rightById(0), rightById(round));
  const vs0 = change ? `+${change.gained} −${change.lost} (p ${change.p < 0.001 ? "< 0.001" : change.p.toFixed(3)})` : "–";
  const b = board.get(round);
  return `| ${round} | ${accuracyCell(r.correct, r.total)} | ${byStory(round)} | ${vs0} | ${b ? accuracyCell(b.correct, b.questions) : "–"} | ${q ? `${accuracyCell(q.correct, q.questions)}, ${q.episodes} ep.` : "–"} | ${signal(round)} | ${live.has(round) ? clock(live.get(round)!) : "–"} |`;
});
const discrimination = (r: BenchReport) => BELIEF_ORDERS.map((o) => { const j = beliefDiscrimination(r.byType, o); return j === undefined ? "–" : j.toFixed(2); }).join(" / ");
const typeRows = [...scores.entries()].map(([round, r]) => `| ${round} | ${types.map((t) => { const s = r.byType[t]; return s ? `${(100 * s.correct / s.total).toFixed(1)}% (${s.correct}/${s.total})` : "–"; }).join(" | ")} | ${discrimination(r)} |`);
const load = loadavg().map((l) => l.toFixed(1)).join(", ");
const text = [
  values.start !== undefined
    ? `Self-play on ToMi from ${sft}, seed ${seed};`
    : `Self-play on ToMi: policy preset 1m (word tokenizer) SFT'd ${values["sft-steps"]} steps at batch 32 on ${values["train-questions"]} generated questions (the learning recipe, vanilla prompt), seed ${seed};`,
  `a round of GRPO (${values["round-steps"]} steps of ${values["round-prompts"]} questions x 8 replies at temperature ${values["round-temperature"]}, ${values["round-advantage"]} advantages, ${values["round-balance"] === "type" ? "question types in equal shares, " : ""}${values["round-continue"] ? "each round going on from the previous round's optimizer, " : ""}lr ${values["round-lr"]}${values["round-warmup"] > 0 ? ` after ${values["round-warmup"]} warmup updates` : ""}${values["round-min-lr"] !== undefined ? ` decaying to ${values["round-min-lr"]} over ${values["round-continue"] ? "all the rounds" : "each round"}` : ""}, KL ${values["round-kl"]}, dynamic sampling, answers among the story's containers) on the quiz questions (${values["quiz-questions"]} per seat) of ${values["round-recent"] !== undefined ? `the latest ${values["round-recent"]} episodes, every ${E}` : `every ${E} episodes`},`,
  `seats acting at temperature ${values["act-temperature"]} among the valid actions${values["max-steps"] !== undefined ? `, episodes of at most ${values["max-steps"]} timesteps` : ""}. Held-out: ${heldOut.questions} questions about ${heldOut.episodes} episodes the starting policy played from seed ${heldSeeds[0]} on (at most to ${heldSeeds[1]}; training played seeds ${trainSeeds[0]}-${trainSeeds[1]}): ${heldOut.types}.`,
  "Each round's policy answers them greedily, as the quiz asks. The questions about one story are not independent: the Wilson interval treats them as if they were, the bootstrap over stories does not;",
  "the rounds answer the same questions, so the change against round 0 is counted question by question. A seat's quiz questions overlap the other seats' (an episode has about 9): its own episodes' column counts each seat's answers.",
  values["board-held-out"] > 0
    ? `The board's held-out column is the training board's own curve (heldOutEpisodes ${values["board-held-out"]}): every round on the quiz questions of the self-play room's first ${values["board-held-out"]} quizzed episodes, which no round trained on${boardHeldOut[0] ? ` (${boardHeldOut[0].questions} questions, set ${boardHeldOut[0].questionSet})` : ""}.`
    : "The room held out no episodes (--board-held-out 0): the board has no held-out curve.",
  "",
  "| round | held-out quiz accuracy [95% Wilson] | [95% over stories] | against round 0: right now, wrong before / the reverse (McNemar p) | the board's held-out [95% Wilson] | its own episodes' quiz [95% Wilson] | the round's reward signal | playing since |",
  "|--:|--:|--:|--:|--:|--:|:--|--:|",
  ...rows,
  "",
  "By type, held-out:",
  "",
  `| round | ${types.join(" | ")} | false from true belief, 1st / 2nd order |`,
  `|--:|${types.map(() => "--:").join("|")}|--:|`,
  ...typeRows,
  "",
  "False from true belief: the accuracy on the false-belief questions plus the true-belief ones, minus 1, for each order (measurements/belief-discrimination.ts): about 0 when the answer does not depend on what the agent saw, whatever the total.",
  "",
  "Playing since: when the round's policy began to play, since the self-play room opened.",
  wallTimeLine((performance.now() - started) / 1000, timings),
  `Load average at the end (1, 5, 15 min): ${load}.`,
  ...(failure ? ["", `Incomplete: ${failure}.`] : []),
  "",
].join("\n");
const pts = (f: (r: BenchReport) => number) => [...scores.entries()].map(([k, r]): [number, number] => [k, 100 * f(r)]);
writeResults(out, text, {
  "curve.svg": linePlot([
    {
      title: "Self-play on ToMi: quiz accuracy (%)",
      x: "round",
      series: [
        { name: `held-out (${heldOut.questions} questions)`, points: pts((r) => r.correct / r.total) },
        { name: "95% low", points: pts((r) => wilsonInterval(r.correct, r.total).low) },
        { name: "95% high", points: pts((r) => wilsonInterval(r.correct, r.total).high) },
        { name: "its own episodes", points: curve.filter((q) => q.questions > 0 && q.round <= values.rounds).map((q): [number, number] => [q.round, 100 * q.accuracy]) },
      ],
    },
  ]),
});
if (failure) process.exitCode = 1;
