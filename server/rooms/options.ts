/**
 * Options of the room types and of joining a room, validated with zod. The same schemas check
 * the REST API's request bodies, so a bad option is refused with the field that is wrong before a
 * room exists.
 */
import { randomInt } from "node:crypto";
import { z } from "zod";
import { checkAgentSpec } from "../../agents/registry.js";
import { MODES } from "../../worlds/question/benchmark.js";
import { WORLD_NAMES } from "../../worlds/registry.js";
import { SelfPlayOptionsSchema } from "../self-play/options.js";

/**
 * An agent spec from the registry ("simulation", "random:3", "policy:DIR?temperature=0.7"): its
 * shape only. Checking has no side effects: a policy's checkpoint loads when the room starts.
 */
const agentSpec = z
  .string()
  .min(1)
  // Long enough for `llm:MODEL@BASE_URL?options` specs.
  .max(2000)
  .superRefine((spec, ctx) => {
    try {
      checkAgentSpec(spec);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message });
    }
  });

/**
 * zod drops a record's "__proto__" key without a word (JSON.parse makes it an own key), so the
 * seat check after parsing never sees it and the seat named so is silently ignored: refuse it here.
 */
function refuseProtoKey(value: unknown, ctx: { addIssue(issue: { code: "custom"; message: string; path: string[]; input: unknown }): void }): unknown {
  if (value !== null && typeof value === "object" && Object.hasOwn(value, "__proto__")) {
    ctx.addIssue({ code: "custom", message: "not a seat of this story", path: ["__proto__"], input: value });
  }
  return value;
}

/** Who plays a seat of a simulation room when no person does. */
const seatController = z.union([z.literal("scripted"), z.literal("none"), agentSpec]);

const title = z.string().trim().min(1).max(120);
const seed = z.number().int().min(0).max(2 ** 32 - 1);
/**
 * An absent seed is drawn at random, not 0: a seed anyone can guess lets a seated client replay
 * the story offline and read the other agents' minds (the run publishes it when it ends).
 */
const drawnSeed = () => randomInt(0, 2 ** 32);

/** The most quiz questions a seat is asked per episode (each is a model call, or a person's minute). */
export const MAX_QUIZ_QUESTIONS = 20;

export const QuizOptionsSchema = z
  .object({
    /** Questions per seat per episode. */
    questions: z.number().int().min(1).max(MAX_QUIZ_QUESTIONS).default(3),
    /** Only these question types (the world's benchmark's rows); all when absent. */
    types: z.array(z.string().min(1).max(64)).min(1).max(32).optional(),
    /** How long a person has to answer; agents have it per question. */
    deadlineMs: z.number().int().min(1000).max(600_000).default(60_000),
  })
  .strict();
export type QuizOptions = z.infer<typeof QuizOptionsSchema>;

export const QuizAnswerMessageSchema = z
  .object({
    episode: z.number().int().min(1),
    id: z.number().int().min(0).max(1000),
    answer: z.string().max(2000),
  })
  .strict();

export const SimulationOptionsSchema = z
  .object({
    world: z.enum(WORLD_NAMES as [string, ...string[]], { error: `expected one of ${WORLD_NAMES.join(", ")}` }),
    seed: seed.default(drawnSeed),
    /** Per-agent controller by agent name; agents not named get `defaultAgent`. */
    agents: z.preprocess(refuseProtoKey, z.record(z.string().min(1).max(64), seatController).default({})),
    defaultAgent: seatController.default("scripted"),
    /** Seats a person may take: every seat, none, or these agents (by name or 0-based position). */
    humanSeats: z
      .union([z.literal("all"), z.literal("none"), z.array(z.union([z.string().min(1).max(64), z.number().int().min(0).max(63)])).max(64)])
      .default("none"),
    /** Milliseconds between timesteps (0: as fast as the agents answer). */
    tickMs: z.number().int().min(0).max(60_000).default(1000),
    /** How long a person has per turn before the seat's controller acts. */
    turnDeadlineMs: z.number().int().min(200).max(600_000).default(30_000),
    /** Play a new episode (the next seed) after each one ends. */
    loop: z.boolean().default(false),
    /** Pause between episodes when looping. */
    pauseMs: z.number().int().min(0).max(600_000).default(3000),
    maxSteps: z.number().int().min(1).max(100_000).default(500),
    private: z.boolean().default(false),
    title: title.optional(),
    /** How long a dropped person's seat is held for them. */
    reconnectSeconds: z.number().int().min(0).max(3600).default(60),
    /** Keep a finished room open this long for viewing, then close it. */
    lingerSeconds: z.number().int().min(0).max(86_400).default(600),
    /**
     * Audit every action live for information leaks (facts its agent never perceived): marked on the
     * world's timeline (spectators only) and logged with each episode.
     */
    audit: z.boolean().default(false),
    /** The world's own settings (its ScenarioFactory.options: the economy's parameters), checked when the room is created. */
    worldOptions: z.preprocess(refuseProtoKey, z.record(z.string().min(1).max(64), z.unknown())).optional(),
    /**
     * At each episode's end, ask every seat a few questions about it (ToM questions labelled by the
     * world model, server/rooms/quiz.ts), score them, log them with the run and show the scores.
     */
    quiz: QuizOptionsSchema.optional(),
    /** Train the seats' `policy:DIR` on the room's episodes on a schedule, and play each new checkpoint (server/self-play/). */
    selfPlay: SelfPlayOptionsSchema.optional(),
  })
  .strict()
  .refine((o) => o.selfPlay?.heldOutEpisodes === undefined || o.quiz !== undefined, {
    message: "give the room a quiz too (the held-out set is the held-out episodes' quiz questions)",
    path: ["selfPlay", "heldOutEpisodes"],
  });
export type SimulationOptions = z.infer<typeof SimulationOptionsSchema>;
export type SimulationOptionsInput = z.input<typeof SimulationOptionsSchema>;

/** Who plays a user of a social room when no person does: the latent model's rule agent, nobody, or a registry agent. */
const socialController = z.union([z.literal("rule"), z.literal("none"), agentSpec]);

export const SocialOptionsSchema = z
  .object({
    seed: seed.default(drawnSeed),
    /** Users in the generated network (one seat each). */
    users: z.number().int().min(2).max(10_000).default(50),
    /** Root posts by the most followed users, one every `every` timesteps from the first. */
    posts: z.number().int().min(1).max(1000).default(3),
    every: z.number().int().min(1).max(10_000).default(5),
    /** Per-user controller by name; users not named get `defaultAgent`. */
    agents: z.preprocess(refuseProtoKey, z.record(z.string().min(1).max(64), socialController).default({})),
    defaultAgent: socialController.default("rule"),
    /** Users whose seat a person may take: every user, none, or these (by name or 0-based position). */
    humanSeats: z
      .union([z.literal("all"), z.literal("none"), z.array(z.union([z.string().min(1).max(64), z.number().int().min(0).max(9_999)])).max(64)])
      .default("none"),
    tickMs: z.number().int().min(0).max(60_000).default(1000),
    /** How long the room waits for a person whose app is open; then the seat's controller acts for them. */
    turnDeadlineMs: z.number().int().min(200).max(600_000).default(15_000),
    loop: z.boolean().default(false),
    pauseMs: z.number().int().min(0).max(600_000).default(3000),
    maxSteps: z.number().int().min(1).max(100_000).default(300),
    private: z.boolean().default(false),
    title: title.optional(),
    reconnectSeconds: z.number().int().min(0).max(3600).default(60),
    lingerSeconds: z.number().int().min(0).max(86_400).default(600),
    /**
     * Audit every action live for information leaks (an item its user was never shown, targeted or
     * named): marked on the world's timeline (spectators only) and logged with each episode.
     */
    audit: z.boolean().default(false),
  })
  .strict();
export type SocialOptions = z.infer<typeof SocialOptionsSchema>;
export type SocialOptionsInput = z.input<typeof SocialOptionsSchema>;

/** A social room's messages beyond `act`: a spectator's or a person's request for a user's view, and a person's new post. */
export const PerspectiveRequestSchema = z.strictObject({ user: z.string().min(1).max(64) });
export const PostMessageSchema = z.strictObject({ content: z.string().max(2000).regex(/\S/, { error: "is empty" }), topic: z.string().min(1).max(64).optional() });

export const BenchmarkOptionsSchema = z
  .object({
    benchmark: z.enum(WORLD_NAMES as [string, ...string[]], { error: `expected one of ${WORLD_NAMES.join(", ")}` }),
    /** A benchmark file under one of the server's data roots. */
    data: z.string().min(1).max(1000).optional(),
    /** A generated set instead of a file. */
    generate: z.object({ n: z.number().int().min(1).max(10_000), seed: seed.default(drawnSeed) }).strict().optional(),
    limit: z.number().int().min(1).optional(),
    /** The agent under test, or "human": a person takes the respondent's seat and answers. */
    agent: z.union([z.literal("human"), agentSpec]).default("simulation"),
    /** Who the person in the seat is, in the report's agent name ("human:NAME"). */
    participant: z.string().trim().min(1).max(40).regex(/^[\w .@-]+$/, "letters, digits, spaces and . @ - _ only").optional(),
    mode: z.enum(MODES as [string, ...string[]]).default("vanilla"),
    /** A person's time per question; past it the question counts as unanswered (as `bench --timeout`). */
    turnDeadlineMs: z.number().int().min(1000).max(3_600_000).default(120_000),
    /** An agent's time per question (absent: no limit). */
    timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
    /** Pause between questions, so that people can watch an agent's run. */
    tickMs: z.number().int().min(0).max(60_000).default(0),
    private: z.boolean().default(false),
    title: title.optional(),
    reconnectSeconds: z.number().int().min(0).max(3600).default(120),
    lingerSeconds: z.number().int().min(0).max(86_400).default(3600),
  })
  .strict()
  .refine((o) => (o.data === undefined) !== (o.generate === undefined), { message: "give exactly one of data (a file) and generate ({n, seed})", path: ["data"] });
export type BenchmarkOptions = z.infer<typeof BenchmarkOptionsSchema>;
export type BenchmarkOptionsInput = z.input<typeof BenchmarkOptionsSchema>;

export const JoinOptionsSchema = z
  .object({
    seat: z.string().min(1).max(64).optional(),
    token: z.string().min(1).max(128).optional(),
    name: z.string().trim().min(1).max(40).optional(),
  })
  // The SDK adds fields of its own to join options; unknown keys are dropped, not refused.
  .strip();

export const ActMessageSchema = z.object({
  action: z.unknown(),
  timestep: z.number().int().min(1).optional(),
});

/** "field: message; field: message" from a zod error (what the API and the rooms answer). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.map(String).join(".");
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join("; ");
}

export class OptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OptionsError";
  }
}

export function parseOptions<T extends z.ZodType>(schema: T, raw: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw new OptionsError(`bad ${what} options: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
