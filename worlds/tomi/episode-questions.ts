/**
 * ToMi's questions about any episode (a room's, or a story of a ToMi file): for every object
 * whose place the story tells, reality and memory, first-order belief for every agent and
 * second-order belief for every ordered pair, wherever the world model holds an answer; labelled
 * by the world model and typed as ToMi types them (`_tom` when the belief is not reality), written
 * as a ToMi `.txt` with its `.trace`. A room's episode is written as the story its actions and
 * narration make, one sentence per event, in the order the world applied them.
 */
import type { Episode } from "../core/episode.js";
import { playedSteps, StoryMismatch, type EpisodeQuestion, type EpisodeQuiz, type QuestionMaker } from "../core/episode-questions.js";
import { beliefOf } from "../core/rooms.js";
import type { BenchItem } from "../question/benchmark.js";
import { TOMI_QUESTION_TYPES } from "./babi.js";
import type { TomiBenchItem } from "./benchmark.js";
import { questionType, worldModelAnswer } from "./questions.js";
import { playTomi } from "./replay.js";
import type { TomiQuestion, TomiSentence } from "./sentence.js";
import { renderQuestion, renderSentence } from "./sentences.js";
import { buildScenario, type SentenceAt } from "./story.js";
import { storyTypeOf } from "./story-type.js";
import type { TomiAction, TomiNarration, TomiState } from "./world.js";

interface TomiEpisodeQuestion extends EpisodeQuestion {
  /** With the asked agent's position in the story, as the trace writes it ("first_order_1_tom"). */
  readonly rawType: string;
  readonly storyType: string;
  readonly parsed: TomiQuestion;
}

interface TomiQuiz extends EpisodeQuiz {
  readonly sentences: readonly TomiSentence[];
  readonly questions: readonly TomiEpisodeQuestion[];
}

/** Every question about the story that ended in `state`, labelled. */
function questionsAbout(state: TomiState): TomiEpisodeQuestion[] {
  const out: TomiEpisodeQuestion[] = [];
  const agents = state.agents;
  const digit = (a: string) => agents.indexOf(a);
  // The story type pairs the asked agents with the story's first two, as ToMi's stories have two.
  const pairWith = (a: string): [string, string] => [a, agents.find((b) => b !== a) ?? a];
  for (const object of state.layout.objects) {
    const reality = state.objectContainer.get(object);
    if (reality === undefined) continue;
    const ask = (q: TomiQuestion, about: string[], pair: [string, string]) => {
      const answer = worldModelAnswer(state, q);
      if (answer === undefined) return;
      const type = questionType(q, answer, reality);
      const rawType = about.length ? type.replace(/^(first_order|second_order)_/, `$1_${digit(about[0]!)}_`) : type;
      out.push({ type, question: renderQuestion(q), answer, about, rawType, storyType: storyTypeOf(state, pair, object), parsed: q });
    };
    const main: [string, string] = [agents[0] ?? "", agents[1] ?? agents[0] ?? ""];
    ask({ kind: "memory", object }, [], main);
    for (const a of agents) ask({ kind: "first_order", agent: a, object }, [a], pairWith(a));
    for (const a of agents) for (const b of agents) if (a !== b) ask({ kind: "second_order", agent: a, other: b, object }, [a, b], [a, b]);
    ask({ kind: "reality", object }, [], main);
  }
  return out;
}

/**
 * The story an episode of the ToMi world tells: each timestep's narration, then each agent's
 * action in agent order (the order `step` applies them), one sentence each.
 */
function storyOf(episode: Episode, initial: TomiState): TomiSentence[] {
  const room = new Map(initial.agentRoom);
  const out: TomiSentence[] = [];
  // Objects whose place the story has told. Agents who act freely (a room's policies) may move an
  // object before the narrator says where it is; it lay there from the start (the world's initial
  // state), seen by whoever entered its room, so the story tells its place first of all.
  const told = new Set<string>();
  // Where each object is (the narrator tells that, as the world does: worlds/tomi/world.ts).
  const where = new Map(initial.objectContainer);
  for (const step of playedSteps<TomiAction, TomiNarration>(episode)) {
    for (const n of step.narration) {
      switch (n.type) {
        case "object_at":
          told.add(n.object);
          out.push({ kind: "located", subject: n.object, place: where.get(n.object) ?? n.container });
          break;
        case "container_at":
          out.push({ kind: "located", subject: n.container, place: n.room });
          break;
        case "agents_at":
          for (const a of n.agents) room.set(a, n.room);
          out.push({ kind: "agents_at", agents: n.agents, room: n.room });
          break;
        case "remark":
          out.push({ kind: "remark", agent: n.agent, verb: n.verb, thing: n.thing, period: n.period });
          break;
      }
    }
    for (const { agent, action: a } of step.actions) {
      const here = room.get(agent);
      if (a.type === "enter") {
        room.set(agent, a.room);
        out.push({ kind: "enter", agent, room: a.room });
      } else if (a.type === "exit") {
        room.delete(agent);
        if (here !== undefined) out.push({ kind: "exit", agent, room: here });
      } else if (a.type === "move") {
        // Two agents who move an object to the same container in one timestep: the second move
        // changes nothing (and no ToMi sentence can say it).
        if (where.get(a.object) === a.container) continue;
        const start = initial.objectContainer.get(a.object);
        if (!told.has(a.object) && start !== undefined) out.unshift({ kind: "located", subject: a.object, place: start });
        told.add(a.object);
        where.set(a.object, a.container);
        out.push({ kind: "move", agent, object: a.object, container: a.container });
      }
    }
  }
  return out;
}

export const tomiQuestions: QuestionMaker = {
  types: TOMI_QUESTION_TYPES,
  extension: ".txt",

  async fromEpisode(episode: Episode, initialState: unknown, source: string): Promise<TomiQuiz> {
    const sentences = storyOf(episode, initialState as TomiState);
    // Asked about the story as the benchmark will read it (only what it tells), and each label
    // checked against where the episode itself ended.
    const at: SentenceAt[] = sentences.map((sentence, i) => ({ sentence, text: renderSentence(sentence), line: i + 1 }));
    const told = playTomi(buildScenario(at, source), source, { mentalStates: false }).episode.finalState;
    const questions = questionsAbout(told);
    const final = episode.finalState as TomiState;
    for (const q of questions) {
      const live = worldModelAnswer(final, q.parsed);
      if (live !== q.answer) throw new StoryMismatch(source, q.question, String(q.answer), live);
    }
    return { source, sentences, questions };
  },

  async fromItems(_benchmark, items: readonly BenchItem[]): Promise<TomiQuiz[]> {
    const quizzes: TomiQuiz[] = [];
    let last: TomiBenchItem | undefined;
    for (const item of items as readonly TomiBenchItem[]) {
      if (last && item.storyText === last.storyText) continue;
      last = item;
      const at: SentenceAt[] = item.raw.story.map((s) => ({ sentence: s.sentence, text: s.text, line: s.fileLine }));
      const state = playTomi(buildScenario(at, item.raw.file), item.raw.file, { mentalStates: false }).episode.finalState;
      quizzes.push({ source: `${item.raw.file}:${item.raw.story[0]?.fileLine ?? item.raw.line}`, sentences: item.raw.story.map((s) => s.sentence), questions: questionsAbout(state) });
    }
    return quizzes;
  },

  write(quizzes, out) {
    const base = out.replace(/\.txt$/, "");
    const txt: string[] = [];
    const trace: string[] = [];
    for (const quiz of quizzes as readonly TomiQuiz[]) {
      const lines = quiz.sentences.map((s, i) => `${i + 1} ${renderSentence(s)}`);
      const events = quiz.sentences.map((s) => eventToken(s, quiz.sentences));
      for (const q of quiz.questions) {
        txt.push(...lines, `${lines.length + 1} ${q.question}\t${q.answer as string}\t1`);
        trace.push([...events, q.rawType, q.storyType].join(","));
      }
    }
    return {
      data: `${base}.txt`,
      files: [
        { path: `${base}.trace`, text: trace.join("\n") + "\n" },
        { path: `${base}.txt`, text: txt.join("\n") + "\n" },
      ],
    };
  },
};

/** A trace's event token for a sentence ("agent_1_exits"): what happened, agents by their order of appearance. */
function eventToken(s: TomiSentence, story: readonly TomiSentence[]): string {
  const order: string[] = [];
  for (const x of story) if ("agent" in x && !order.includes(x.agent)) order.push(x.agent);
  const who = (a: string) => `agent_${order.indexOf(a)}`;
  switch (s.kind) {
    case "enter":
      return `${who(s.agent)}_enters`;
    case "exit":
      return `${who(s.agent)}_exits`;
    case "move":
      return `${who(s.agent)}_moves_obj`;
    case "located":
      return "located";
    case "agents_at":
      return "agents_at";
    case "remark":
      return "remark";
  }
}
