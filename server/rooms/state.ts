/**
 * The synchronized state of every room (@colyseus/schema). What is public and what is private is
 * decided here, by structure:
 *
 * - public (every client): the room's settings and status, its seats, the timeline of timesteps
 *   (numbers and times only), and a benchmark's progress and score table;
 * - `perspectives` (`.view()`): one Perspective per agent, holding what that agent observed, its
 *   mental state and its own actions, and a "world" perspective holding the world's state. A client receives a Perspective only when its StateView holds it: a seated
 *   client holds its own agent's, spectators of a public room (and token holders of a private one)
 *   hold all of them.
 *
 * The world's state text is omniscient, so it is a perspective too: a person in a seat must not
 * learn from the "public" timeline what their agent could not perceive. Everyone's actions at a
 * timestep are the `action` fields of the agents' perspectives (a spectator holds them all).
 *
 * Steps hold primitives only: @colyseus/schema 5.0 does not send the entries of a map nested in
 * an instance under a `.view()` collection in incremental view patches (only in full states).
 */
import { Encoder, schema, t, type SchemaType } from "@colyseus/schema";

/**
 * Each room's encoder writes into a buffer of this size and grows it, with a "buffer overflow ...
 * increase BUFFER_SIZE" advice in the server log, when a full state (what a joining client is sent)
 * is larger. The default 16 KB holds a few generated stories; a benchmark room keeps its last 100
 * questions, each with its story and the agent's prompt: about 220 KB for ToMi, 830 KB for Hi-ToM's
 * longer stories (test/server/state-buffer.test.ts measures them). A buffer's pages take memory only
 * once written (50 rooms' 1 MB buffers add under 1 MB to the process until used), so it is sized
 * for the largest of those. Set before any room (and its encoder) exists.
 */
Encoder.BUFFER_SIZE = 1024 * 1024;

export const WORLD_PERSPECTIVE = "world";

export const Seat = schema(
  {
    agent: t.string(),
    /** Who plays the seat when no person does: "scripted", "simulation", "random:3", "none" (a person only). */
    controller: t.string(),
    /** A person may take this seat. */
    human: t.boolean(),
    /** Display name of the person in the seat ("" when nobody is). */
    occupant: t.string(),
    /** The person's connection is up (false while the seat waits for them to reconnect). */
    connected: t.boolean(),
    /** The world waits for this seat's person to act. */
    waiting: t.boolean(),
    /** Epoch milliseconds when the current turn falls back to the controller; 0 when none. */
    deadline: t.number(),
  },
  "Seat",
);
export type Seat = SchemaType<typeof Seat>;

/** A timestep happened: its number and when the server recorded it (epoch ms, for latency). */
export const Tick = schema(
  {
    timestep: t.uint32(),
    at: t.number(),
  },
  "Tick",
);
export type Tick = SchemaType<typeof Tick>;

export const PerspectiveStep = schema(
  {
    timestep: t.uint32(),
    /** World: the state. Agent: what it perceived ("" when nothing). */
    text: t.string(),
    /** The agent perceived the whole state (`<same_as_state />`). */
    sameAsState: t.boolean(),
    /** The agent's mental state (beliefs), "" when it has none. */
    mentalState: t.string(),
    /** The agent's own action at this timestep as the socialized context writes it ("none"); "" for the world. */
    action: t.string(),
    /** Who produced the action: "agent" (the seat's controller), "human", or "fallback"; "" for the world. */
    source: t.string(),
    /** The world's structured observation (JSON), for programs and the web client. */
    data: t.string(),
    /** World: the leaks the live audit found in this timestep's actions (JSON list), "" when none or not audited. */
    leaks: t.string(),
  },
  "PerspectiveStep",
);
export type PerspectiveStep = SchemaType<typeof PerspectiveStep>;

/** A step with every field set (schema instances start empty); the world's steps leave the agent fields "". */
export function perspectiveStep(f: {
  timestep: number;
  text: string;
  sameAsState: boolean;
  mentalState?: string;
  action?: string;
  source?: string;
  data?: string;
  leaks?: string;
}): PerspectiveStep {
  const step = new PerspectiveStep();
  step.timestep = f.timestep;
  step.text = f.text;
  step.sameAsState = f.sameAsState;
  step.mentalState = f.mentalState ?? "";
  step.action = f.action ?? "";
  step.source = f.source ?? "";
  step.data = f.data ?? "";
  step.leaks = f.leaks ?? "";
  return step;
}

/** The tick of a timestep recorded now. */
export function tickNow(timestep: number): Tick {
  const tick = new Tick();
  tick.timestep = timestep;
  tick.at = Date.now();
  return tick;
}

/** Appends to a synchronized list and drops its oldest entries past `max` (histories stay bounded). */
export function pushBounded<T>(list: { push(x: T): number; shift(): T | undefined; length: number } | undefined, item: T, max: number): void {
  if (!list) return;
  list.push(item);
  while (list.length > max) list.shift();
}

export const Perspective = schema(
  {
    /** "world" or an agent's name. */
    name: t.string(),
    steps: t.array(PerspectiveStep),
  },
  "Perspective",
);
export type Perspective = SchemaType<typeof Perspective>;

export const TypeScore = schema(
  {
    type: t.string(),
    total: t.uint32(),
    correct: t.uint32(),
  },
  "TypeScore",
);
export type TypeScore = SchemaType<typeof TypeScore>;

/** One answered question, as far as it is public: no question text, no label, no answer. */
export const ItemOutcome = schema(
  {
    index: t.uint32(),
    type: t.string(),
    correct: t.boolean(),
    /** "agent", "human", or, unanswered, "timeout" (past the deadline) or "error" (the agent failed). */
    source: t.string(),
  },
  "ItemOutcome",
);
export type ItemOutcome = SchemaType<typeof ItemOutcome>;

export const Progress = schema(
  {
    benchmark: t.string(),
    agent: t.string(),
    mode: t.string(),
    total: t.uint32(),
    done: t.uint32(),
    correct: t.uint32(),
    byType: t.map(TypeScore),
    /** The last few outcomes, newest last. */
    recent: t.array(ItemOutcome),
    finished: t.boolean(),
  },
  "Progress",
);
export type Progress = SchemaType<typeof Progress>;

/** One seat's quiz at the end of one episode, as far as it is public: who answered, how many right. */
export const QuizScore = schema(
  {
    episode: t.uint32(),
    agent: t.string(),
    /** Who answered: "human:NAME", a registry agent ("policy:DIR", "llm:..."), or "simulation" for a scripted seat. */
    answeredBy: t.string(),
    asked: t.uint32(),
    correct: t.uint32(),
  },
  "QuizScore",
);
export type QuizScore = SchemaType<typeof QuizScore>;

export const RoomState = schema(
  {
    /** "simulation", "benchmark" or "social". */
    kind: t.string(),
    title: t.string(),
    world: t.string(),
    /** "starting", "running", "waiting" (for a person), "between" (episodes), "finished", "stopped", "failed". */
    status: t.string(),
    /** Why the room is in its status (an error, what it waits for). */
    note: t.string(),
    visibility: t.string(),
    runId: t.string(),
    episode: t.uint32(),
    /** The run's first seed (episode n plays seed + n - 1), published when the run ends: "" while it is live (it would tell a seated client the stories). */
    seed: t.string(),
    tickMs: t.uint32(),
    turnDeadlineMs: t.uint32(),
    /** The current episode's agents, in the socialized context's order. */
    agents: t.array("string"),
    seats: t.map(Seat),
    timeline: t.array(Tick),
    perspectives: t.map(Perspective).view(),
    progress: Progress,
    /** Quiz scores, one per seat per episode, newest last (a room with `quiz`). */
    quiz: t.array(QuizScore),
  },
  "RoomState",
);
export type RoomState = SchemaType<typeof RoomState>;
