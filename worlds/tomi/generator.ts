/**
 * Writes new ToMi stories in the benchmark's own format (`X.txt` + `X.trace`), with its question
 * types (first- and second-order, true- and false-belief, reality, memory) and story types (true
 * belief, false belief, second-order false belief), and its distractors (a third agent coming and
 * going, unrelated remarks). The story grammar follows the original generator; the labels are the
 * world model's, so they are right by construction, and the story type says what the agents end
 * up believing (story-type.ts), where the original generator's rule mislabels some stories.
 */
import { Rng } from "../core/rng.js";
import type { TomiQuestion, TomiSentence } from "./sentence.js";
import { renderQuestion, renderSentence } from "./sentences.js";
import { rewordSentence } from "./rewording.js";
import { buildScenario } from "./story.js";
import { replayTomi } from "./replay.js";
import { questionType, worldModelAnswer } from "./questions.js";
import { AGENT_NAMES, CONTAINER_KINDS, CONTAINERS, OBJECTS, REMARK_VERBS, ROOMS } from "../core/vocabulary.js";
import type { TomiStoryType } from "./babi.js";

export interface GeneratedQuestion {
  readonly question: TomiQuestion;
  readonly text: string;
  readonly answer: string;
  /** With the asked agent's digit, as the trace writes it ("first_order_1_tom"). */
  readonly rawType: string;
}

export interface GeneratedStory {
  readonly sentences: readonly TomiSentence[];
  /** The trace's event tokens, in story order. */
  readonly events: readonly string[];
  readonly storyType: TomiStoryType;
  readonly questions: readonly GeneratedQuestion[];
}

interface Step {
  sentence: TomiSentence;
  event?: string;
}

/**
 * Variations beyond ToMi's own stories, for training data that does not teach the file's quirks:
 * by default none (the stories ToMi's generator writes, draw for draw).
 */
export interface TomiVariations {
  /** The share of stories whose containers are plain nouns ("envelope", not "green_envelope"). */
  readonly plainContainers?: number;
  /** The share of stories that also say where a container stands ("The envelope is in the hall."). */
  readonly placedContainers?: number;
  /**
   * The share of sentences whose wording is drawn from rewording.ts's ("Ella walked into the den.";
   * ToMi's own is one of them, and "X is in the room." has no other, so somewhat fewer come out in
   * other words: about 0.4 of them at 0.5). The wording is drawn apart from the stories, so a file with a share has the same stories, questions
   * and labels as the file without one, only worded otherwise.
   */
  readonly reworded?: number;
}

export async function generateTomiStory(rng: Rng, vary: TomiVariations = {}): Promise<GeneratedStory> {
  const [a1, a2, a3] = rng.sample(AGENT_NAMES, 3) as [string, string, string];
  const [room, altRoom] = rng.sample(ROOMS, 2) as [string, string];
  const obj = rng.pick(OBJECTS);
  const plain = (vary.plainContainers ?? 0) > 0 && rng.chance(vary.plainContainers!);
  const kinds = rng.sample(plain ? CONTAINER_KINDS : CONTAINERS, 2) as [string, string];
  const [c1, c2] = kinds;

  const steps: Step[] = [];
  const order = rng.chance(0.5) ? [[a1, 0] as const, [a2, 1] as const] : [[a2, 1] as const, [a1, 0] as const];
  for (const [agent, k] of order) steps.push({ sentence: { kind: "enter", agent, room }, event: `enter_agent_${k}` });
  steps.push({ sentence: { kind: "located", subject: obj, place: c1 } });

  // One move and one or two changes of location, in random order, as the original generator
  // draws them. The story type is what the two agents end up believing (story-type.ts): a2 either
  // saw the move, or missed it and never came back (false belief), or came back to the room while
  // a1 watched (true belief again), or after a1 had left (a1 is wrong about a2: second order).
  const acts = rng.shuffle(["move", "loc", ...(rng.chance(0.5) ? ["loc"] : [])]);
  let a2Here = true;
  let a1Here = true;
  let a2SawMove = true;
  let a2Back: "no" | "watched" | "unwatched" = "no";
  for (let i = 0; i < acts.length; i++) {
    if (acts[i] === "move") {
      steps.push({ sentence: { kind: "move", agent: a1, object: obj, container: c2 }, event: "agent_0_moves_obj" });
      a2SawMove = a2Here;
    } else if (a2Here) {
      steps.push({ sentence: { kind: "exit", agent: a2, room }, event: "agent_1_exits" });
      a2Here = false;
    } else {
      if (i === acts.length - 1 && a1Here && rng.chance(0.5)) {
        steps.push({ sentence: { kind: "exit", agent: a1, room }, event: "agent_0_exits" });
        a1Here = false;
      }
      const back = rng.chance(0.5);
      steps.push({ sentence: { kind: "enter", agent: a2, room: back ? room : altRoom }, event: back ? "agent_1_reenters_loc" : "agent_1_reenters_alt_loc" });
      a2Here = back;
      // Back in the room after a move it missed (a2SawMove is false only once the move is done).
      if (back && !a2SawMove) a2Back = a1Here ? "watched" : "unwatched";
    }
  }
  const storyType: TomiStoryType = a2SawMove || a2Back === "watched" ? "true_belief" : a2Back === "unwatched" ? "second_order_false_belief" : "false_belief";

  // A third agent may come (to this room or another) and go, anywhere in the story.
  const comings = rng.int(3);
  if (comings > 0) {
    const slots = rng.sample(range(steps.length + 1), comings).sort((x, y) => x - y);
    const where = rng.chance(0.5) ? room : altRoom;
    const inserts: Step[] = [{ sentence: { kind: "enter", agent: a3, room: where }, event: "agent_2_enters" }];
    if (comings > 1) inserts.push({ sentence: { kind: "exit", agent: a3, room: where }, event: "agent_2_exits" });
    // Insert from the back so earlier slots keep their meaning.
    for (let j = slots.length - 1; j >= 0; j--) steps.splice(slots[j]!, 0, inserts[j]!);
  }

  // Where the containers stand, said once each at a random place after the first is named.
  if ((vary.placedContainers ?? 0) > 0 && rng.chance(vary.placedContainers!)) {
    const first = steps.findIndex((s) => s.sentence.kind === "located");
    for (const c of [c1, c2]) steps.splice(first + 1 + rng.int(steps.length - first), 0, { sentence: { kind: "located", subject: c, place: room } });
  }

  // Unrelated remarks ("Aiden loves the tangerine"), written without a period as in ToMi.
  const remarks = rng.int(3);
  for (let j = 0; j < remarks; j++) {
    const at = rng.int(steps.length + 1);
    const thing = rng.chance(0.8) ? rng.pick(OBJECTS) : rng.pick(ROOMS);
    steps.splice(at, 0, { sentence: { kind: "remark", agent: rng.pick([a1, a2, a3]), verb: rng.pick(REMARK_VERBS), thing, period: false } });
  }

  const sentences = steps.map((s) => s.sentence);
  const scenario = buildScenario(
    sentences.map((sentence) => ({ sentence, text: renderSentence(sentence), line: 0 })),
    "generated story",
  );
  const { episode } = await replayTomi(scenario, "generated story", { mentalStates: false });
  const state = episode.finalState;
  const reality = state.objectContainer.get(obj);
  const asks: [TomiQuestion, number | undefined][] = [
    [{ kind: "memory", object: obj }, undefined],
    [{ kind: "first_order", agent: a1, object: obj }, 0],
    [{ kind: "second_order", agent: a1, other: a2, object: obj }, 0],
    [{ kind: "reality", object: obj }, undefined],
    [{ kind: "first_order", agent: a2, object: obj }, 1],
    [{ kind: "second_order", agent: a2, other: a1, object: obj }, 1],
  ];
  const questions = asks.map(([q, digit]): GeneratedQuestion => {
    const answer = worldModelAnswer(state, q);
    if (answer === undefined) throw new Error(`generator bug: no answer for "${renderQuestion(q)}"`);
    const merged = questionType(q, answer, reality);
    const rawType = digit === undefined ? merged : merged.replace(/^(first_order|second_order)_/, `$1_${digit}_`);
    return { question: q, text: renderQuestion(q), answer, rawType };
  });
  return { sentences, events: steps.flatMap((s) => (s.event ? [s.event] : [])), storyType, questions };
}

export interface TomiFiles {
  readonly txt: string;
  readonly trace: string;
  readonly questions: number;
}

/** `n` questions (six per story, as in ToMi; the last story may give fewer), seeded. */
export async function generateTomi(n: number, seed: number, onProgress?: (done: number) => void, vary: TomiVariations = {}): Promise<TomiFiles> {
  const rng = Rng.seeded(`tomi:${seed}`);
  const wording = Rng.seeded(`tomi-wording:${seed}`);
  const reworded = vary.reworded ?? 0;
  const txt: string[] = [];
  const trace: string[] = [];
  let written = 0;
  while (written < n) {
    const story = await generateTomiStory(rng, vary);
    const lines = story.sentences.map((s) => (reworded > 0 && wording.chance(reworded) ? rewordSentence(s, wording) : renderSentence(s)));
    for (const q of story.questions) {
      if (written >= n) break;
      lines.forEach((line, i) => txt.push(`${i + 1} ${line}`));
      txt.push(`${story.sentences.length + 1} ${q.text}\t${q.answer}\t1`);
      trace.push([...story.events, q.rawType, story.storyType].join(","));
      written++;
    }
    onProgress?.(written);
  }
  return { txt: txt.join("\n") + "\n", trace: trace.join("\n") + "\n", questions: written };
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
