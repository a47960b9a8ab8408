/**
 * Hi-ToM's questions about any episode (a room's, or a story of a Hi-ToM file): for every object
 * the story places, reality (order 0) and the belief of every chain of one to four distinct agents
 * (orders 1 to 4: "Where does A think B thinks the X is?"), wherever the world model holds an
 * answer; labelled by the world model and written in the upstream data layout (CoTP), the story's
 * containers as the choices. A room's episode is written as the story its actions and narration
 * make, one sentence per event, in the order the world applied them (a group entering together is
 * one sentence).
 */
import type { Episode } from "../core/episode.js";
import { playedSteps, StoryMismatch, type EpisodeQuestion, type EpisodeQuiz, type QuestionMaker } from "../core/episode-questions.js";
import { Rng } from "../core/rng.js";
import type { BenchItem } from "../question/benchmark.js";
import { HITOM_TYPES, type HitomBenchItem } from "./benchmark.js";
import type { HitomEntry } from "./dataset.js";
import { worldModelAnswer } from "./questions.js";
import { replayHitom } from "./replay.js";
import { renderChoices, renderQuestion, renderSentence, type HitomQuestion, type HitomSentence } from "./sentences.js";
import { buildHitomScenario, locateIn, type SentenceAt } from "./story.js";
import { WAITING_ROOM } from "./vocabulary.js";
import type { HitomAction, HitomNarration, HitomState } from "./world.js";

interface HitomQuiz extends EpisodeQuiz {
  readonly sentences: readonly HitomSentence[];
  /** The story's containers: the choices of its questions. */
  readonly containers: readonly string[];
  readonly questions: readonly (EpisodeQuestion & { readonly parsed: HitomQuestion })[];
}

/** The deepest order Hi-ToM asks. */
const MAX_ORDER = 4;

/** Every chain of distinct agents of length 1 to `depth`, outermost first. */
function chains(agents: readonly string[], depth: number): string[][] {
  const out: string[][] = [];
  const grow = (path: string[]) => {
    if (path.length) out.push(path);
    if (path.length < depth) for (const a of agents) if (!path.includes(a)) grow([...path, a]);
  };
  grow([]);
  return out.sort((x, y) => x.length - y.length);
}

function questionsAbout(state: HitomState): HitomQuiz["questions"] {
  const out: (EpisodeQuestion & { parsed: HitomQuestion })[] = [];
  const all = [[], ...chains(state.agents, Math.min(MAX_ORDER, state.depth))];
  for (const object of state.layout.objects) {
    for (const agents of all) {
      const q: HitomQuestion = { agents, object };
      const answer = worldModelAnswer(state, q);
      if (answer !== undefined) out.push({ type: `order_${agents.length}`, question: renderQuestion(q), answer, about: agents, parsed: q });
    }
  }
  return out;
}

async function storyState(sentences: readonly HitomSentence[], source: string): Promise<HitomState> {
  const at: SentenceAt[] = sentences.map((sentence, i) => ({ sentence, text: renderSentence(sentence), line: i + 1 }));
  const locate = locateIn(source);
  return (await replayHitom(buildHitomScenario(at, locate), locate, { mentalStates: false })).episode.finalState;
}

/**
 * The story an episode of the Hi-ToM world tells: each timestep's narration, the agents entering a
 * room together (one sentence per room, in the group's order), then the others' actions in agent
 * order: the order `step` applies them.
 */
function storyOf(episode: Episode, initial: HitomState): HitomSentence[] {
  const room = new Map(initial.agentRoom);
  const out: HitomSentence[] = [];
  for (const step of playedSteps<HitomAction, HitomNarration>(episode)) {
    for (const n of step.narration) {
      out.push(n.type === "object_at" ? { kind: "located", object: n.object, container: n.container } : { kind: "remark", agent: n.agent, verb: n.verb, thing: n.thing });
    }
    const actions = step.actions.map(({ agent, action }) => ({ agent, a: action }));
    const groups = new Map<string, { agents: string[]; order?: readonly string[] }>();
    for (const { agent, a } of actions) {
      if (a.type !== "enter") continue;
      let g = groups.get(a.room);
      if (!g) groups.set(a.room, (g = { agents: [] }));
      g.agents.push(agent);
      if (a.together && !g.order) g.order = a.together;
    }
    for (const [to, g] of groups) {
      const rank = (a: string) => (g.order?.includes(a) ? g.order.indexOf(a) : Number.MAX_SAFE_INTEGER);
      const agents = [...g.agents].sort((x, y) => rank(x) - rank(y));
      for (const a of agents) room.set(a, to);
      out.push({ kind: "enter", agents, room: to });
    }
    for (const { agent, a } of actions) {
      const here = room.get(agent);
      switch (a.type) {
        case "exit":
          room.delete(agent);
          if (here !== undefined) out.push({ kind: "exit", agents: [agent], room: here });
          break;
        case "move":
          out.push({ kind: "move", agent, object: a.object, container: a.container });
          break;
        case "stay":
          if (here !== undefined) out.push({ kind: "stay", agent, room: here });
          break;
        case "claim":
          out.push(
            a.to === undefined
              ? { kind: "public_claim", agent, object: a.object, container: a.container }
              : { kind: "private_claim", agent, listener: a.to, object: a.object, container: a.container },
          );
          break;
      }
    }
  }
  return out;
}

export const hitomQuestions: QuestionMaker = {
  types: HITOM_TYPES,
  extension: ".json",

  async fromEpisode(episode: Episode, initialState: unknown, source: string): Promise<HitomQuiz> {
    const initial = initialState as HitomState;
    const sentences = storyOf(episode, initial);
    // Asked about the story as the benchmark will read it (only what it tells), and each label
    // checked against where the episode itself ended.
    const questions = questionsAbout(await storyState(sentences, source));
    const final = episode.finalState as HitomState;
    for (const q of questions) {
      const live = worldModelAnswer(final, q.parsed);
      if (live !== q.answer) throw new StoryMismatch(source, q.question, String(q.answer), live);
    }
    return { source, sentences, containers: initial.layout.containers, questions };
  },

  async fromItems(_benchmark, items: readonly BenchItem[]): Promise<HitomQuiz[]> {
    const quizzes: HitomQuiz[] = [];
    const seen = new Set<string>();
    for (const item of items as readonly HitomBenchItem[]) {
      const { story } = item.raw;
      if (seen.has(story.body)) continue;
      seen.add(story.body);
      const locate = locateIn(item.raw.file, `${item.raw.field}.story`);
      const state = (await replayHitom(story.scenario, locate, { mentalStates: false })).episode.finalState;
      quizzes.push({
        source: `${item.raw.file} ${item.raw.field}`,
        sentences: story.text.sentences.map((s) => s.sentence),
        containers: item.raw.choices,
        questions: questionsAbout(state),
      });
    }
    return quizzes;
  },

  write(quizzes, out, seed) {
    const rng = Rng.seeded(`hitom-questions:${seed}`);
    const data: HitomEntry[] = [];
    for (const quiz of quizzes as readonly HitomQuiz[]) {
      if (quiz.questions.length === 0) continue;
      const story = quiz.sentences.map((s, i) => `${i + 1} ${renderSentence(s)}`).join("\n") + "\n\n";
      const chapters = quiz.sentences.filter((s) => s.kind === "enter" && s.room === WAITING_ROOM).length;
      if (chapters === 0) throw new Error(`${quiz.source}: no group entered the ${WAITING_ROOM}, so the story has no chapter and Hi-ToM's layout cannot hold it`);
      const deception = quiz.sentences.some((s) => s.kind === "public_claim" || s.kind === "private_claim");
      const choices = renderChoices(rng.shuffle(quiz.containers));
      for (const q of quiz.questions) {
        data.push({
          prompting_type: "CoTP",
          deception,
          story_length: chapters,
          question_order: q.about.length,
          sample_id: data.length,
          story,
          question: q.question,
          choices,
          answer: q.answer as string,
        });
      }
    }
    return { data: out, files: [{ path: out, text: JSON.stringify({ data }, null, 1) + "\n" }] };
  },
};
