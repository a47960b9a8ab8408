/**
 * ToMi (Le et al. 2019) as a benchmark: bAbI files read into items, the world model's labels and
 * episode for every story, exact-match scoring (answers are single container tokens), and the
 * official labels that disagree with the world model grouped by cause.
 */
import { basename } from "node:path";
import type { Benchmark, BenchItem, GroundTruth, Mode, Verdict } from "../question/benchmark.js";
import { fill, promptTemplate } from "../question/prompts.js";
import type { QuestionTask } from "../question/world.js";
import { nextTurn, readTomiFile, readTomiFileInSlices, TOMI_QUESTION_TYPES, type StoryLine, type TomiFile, type TomiItem } from "./babi.js";
import { playTomi } from "./replay.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { questionType, worldModelAnswer } from "./questions.js";
import { buildScenario, type SentenceAt } from "./story.js";
import type { TomiState } from "./world.js";
import { contextIdOf } from "../question/context-id.js";
import { RecentCache } from "../core/recent-cache.js";
import { placeKey } from "../core/place-name.js";

export interface TomiBenchItem extends BenchItem {
  readonly answer: string;
  readonly raw: TomiItem;
  readonly storyText: string;
  readonly storyType?: string;
}

export const TOMI_CAUSES = {
  third_agent_entry:
    "The official label is the object's final location, which the two agents never saw there together; a third agent entered the room. " +
    "The original generator applies a third agent's entry with the end-of-story state to the agents it still lists as present.",
  reentry_after_other_left:
    "The official label is the object's final location: one agent re-entered and saw it after the other had left, " +
    "and the original generator lets the absent agent share what the re-entering one saw.",
  label_is_final_location:
    "The official label is the object's final location, which the agents never saw there together (no known generator step explains it).",
  no_world_model_answer: "The world model holds no answer (the agent asked about never saw the object).",
  other: "The official label is neither the world model's answer nor the object's final location.",
} as const;

interface StoryTruth {
  readonly state: TomiState;
  readonly context: SocializedContext;
  readonly contextId: string;
}

/** Exact match after normalizing (the common case, identical strings, costs nothing). */
function sameAnswer(a: string, b: string): boolean {
  return a === b || placeKey(a) === placeKey(b);
}

export class TomiBenchmark implements Benchmark<TomiBenchItem> {
  readonly name = "tomi";
  readonly title = "ToMi";
  readonly types = TOMI_QUESTION_TYPES;
  readonly causes: Readonly<Record<string, string>> = TOMI_CAUSES;
  /** The last few stories' replays: only what questions need (the episode itself is dropped). */
  private readonly replays = new RecentCache<string, StoryTruth>(8);
  /** Candidate answers per story (the containers it names). */
  private readonly candidates = new WeakMap<object, readonly string[]>();

  warnings: string[] = [];

  load(file: string): TomiBenchItem[] {
    return this.itemsOf(file, readTomiFile(file));
  }

  /** load(), reading the file a slice at a time (a server's event loop stays free meanwhile). */
  async loadInSlices(file: string): Promise<TomiBenchItem[]> {
    const parsed = await readTomiFileInSlices(file);
    await nextTurn();
    return this.itemsOf(file, parsed);
  }

  private itemsOf(file: string, parsed: TomiFile): TomiBenchItem[] {
    this.warnings = parsed.traceFile
      ? []
      : [
          `${file}: no ${basename(file).replace(/\.txt$/, "")}.trace beside it: each question's type (the report's rows) is the world model's reading of its story, not ToMi's own, and can differ from it; put the .trace file beside the .txt for the official types`,
        ];
    const items: TomiBenchItem[] = [];
    // Questions about one story come together in the file and share its lines: one text per story.
    let story: readonly StoryLine[] | undefined;
    let storyText = "";
    for (const raw of parsed.items) {
      if (raw.story !== story) {
        story = raw.story;
        storyText = story.map((s) => `${s.n} ${s.text}`).join("\n");
      }
      items.push({
        id: raw.id,
        index: raw.index,
        source: { file: raw.file, line: raw.line },
        // Without a trace the type comes from the world model (see groundTruth), filled in lazily.
        type: raw.trace?.questionType ?? raw.parsedQuestion.kind,
        question: raw.question,
        answer: raw.answer,
        raw,
        storyText,
        storyType: raw.trace?.storyType,
      });
    }
    return items;
  }

  task(item: TomiBenchItem, mode: Mode): QuestionTask {
    let containers = this.candidates.get(item.raw.story);
    if (!containers) {
      const found = new Set<string>();
      for (const s of item.raw.story) {
        if (s.sentence.kind === "move") found.add(s.sentence.container);
        if (s.sentence.kind === "located") found.add(s.sentence.place);
      }
      containers = [...found];
      this.candidates.set(item.raw.story, containers);
    }
    return {
      benchmark: this.name,
      itemId: item.id,
      mode,
      story: item.storyText,
      question: item.question,
      candidates: containers,
      answerInCandidates: true,
      prompt: fill(promptTemplate("worlds/tomi/prompts/tomi-vanilla.txt"), { story: item.storyText, question: item.question }),
    };
  }

  /** One replay per distinct story (ToMi repeats each story for its six questions). */
  replay(item: TomiBenchItem): StoryTruth {
    let r = this.replays.get(item.storyText);
    if (!r) {
      // Pushed one by one, as the simulation agent's reader builds its own: V8 recompiled
      // buildScenario for an array built by map() (another elements kind), a few percent of a run.
      const sentences: SentenceAt[] = [];
      for (const s of item.raw.story) sentences.push({ sentence: s.sentence, text: s.text, line: s.fileLine });
      const { episode, context } = playTomi(buildScenario(sentences, item.raw.file), item.raw.file);
      r = { state: episode.finalState, context, contextId: contextIdOf(item.storyText) };
      // Stories are contiguous in ToMi files, so a few suffice.
      this.replays.set(item.storyText, r);
    }
    return r;
  }

  async groundTruth(item: TomiBenchItem): Promise<GroundTruth> {
    const { state, context, contextId } = this.replay(item);
    const q = item.raw.parsedQuestion;
    const label = worldModelAnswer(state, q);
    if (!item.raw.trace) {
      (item as { type: string }).type = questionType(q, label, state.objectContainer.get(q.object));
    }
    const agrees = label !== undefined && sameAnswer(label, item.raw.answer);
    return { context, contextId, label, agrees, ...(agrees ? {} : { cause: this.cause(item, state, label) }) };
  }

  private cause(item: TomiBenchItem, state: TomiState, label: string | undefined): keyof typeof TOMI_CAUSES {
    const q = item.raw.parsedQuestion;
    if (label === undefined) return "no_world_model_answer";
    const reality = state.objectContainer.get(q.object);
    if (item.raw.answer !== reality) return "other";
    const room = reality === undefined ? undefined : state.containerRoom.get(reality);
    const asked = q.kind === "first_order" ? [q.agent] : q.kind === "second_order" ? [q.agent, q.other] : [];
    const story = item.raw.story.map((s) => s.sentence);
    if (story.some((s) => s.kind === "enter" && s.room === room && !asked.includes(s.agent))) return "third_agent_entry";
    if (q.kind === "second_order") {
      const exited = new Set<string>();
      for (const s of story) {
        if (s.kind === "exit" && asked.includes(s.agent)) exited.add(s.agent);
        if (s.kind === "enter" && s.room === room && asked.includes(s.agent) && [...exited].some((a) => a !== s.agent)) {
          return "reentry_after_other_left";
        }
      }
    }
    return "label_is_final_location";
  }

  /** The container itself. */
  answerText(_item: TomiBenchItem, label: string | readonly string[]): string {
    return Array.isArray(label) ? label.join(", ") : String(label);
  }

  judge(item: TomiBenchItem, answer: string): Verdict {
    return { correct: sameAnswer(answer, item.answer) };
  }
}
