/**
 * Hi-ToM (He, Wu et al. 2023) as a benchmark: the upstream JSON read into items (both prompting
 * styles, each entry its own item), the world model's labels and episode for every story, scoring
 * as upstream's evaluators score (the answer is one of the 15 choices, given as its letter or its
 * text), and the official labels that disagree with the world model grouped by the generator error
 * that explains them: a disputed label is replayed under each known error of the upstream
 * generator (worlds/hitom/rules.ts), and the error that reproduces it is its cause.
 */
import type { Benchmark, BenchItem, GroundTruth, Mode, Verdict } from "../question/benchmark.js";
import { contextIdOf } from "../question/context-id.js";
import { fill, promptTemplate } from "../question/prompts.js";
import type { QuestionTask } from "../question/world.js";
import { readHitomFile, type HitomItem } from "./dataset.js";
import { worldModelAnswer } from "./questions.js";
import { replayHitom, type HitomReplay } from "./replay.js";
import { HITOM_RULES, type HitomRules } from "./rules.js";
import { letterOf, renderChoices } from "./sentences.js";
import { locateIn } from "./story.js";
import { RecentCache } from "../core/recent-cache.js";
import { placeKey } from "../core/place-name.js";

export const HITOM_TYPES = ["order_0", "order_1", "order_2", "order_3", "order_4"] as const;

export interface HitomBenchItem extends BenchItem {
  readonly raw: HitomItem;
}

export const HITOM_CAUSES = {
  ordered_combinations:
    "The upstream generator updates nested beliefs after a move only for chains of witnesses that follow the order in which they " +
    "entered, the mover last (itertools.combinations where permutations are needed): the mover does not know that those who stay " +
    "saw the move, nor does a later-listed witness know it of an earlier-listed one. Replaying the story with that error gives the " +
    "official label. It accounts for the VP labels that differ from the CoTP label of the same question (upstream's own evaluator " +
    "scores VP answers against the CoTP labels) and for a few CoTP labels.",
  reentry_not_seen:
    "Agents came back into the room where the object is and saw it there, but the official label keeps what they believed " +
    "before, as if entering had shown them only the object the chapter names. Replaying the story that way gives the official label.",
  label_from_another_object:
    "The official label is a container the asked object was never in, moved to or claimed to be in: one that only another " +
    "object of the story was in.",
  no_world_model_answer: "The world model holds no answer (an asked agent never saw the object).",
  other:
    "The official label is a container the object was in, but no chain of observations of the asked agents leads there, " +
    "and no known generator error reproduces it.",
} as const;

/** Known generator errors, tried in this order to explain a disputed label. */
const GENERATOR_ERRORS: readonly (readonly [keyof typeof HITOM_CAUSES, HitomRules])[] = [
  ["ordered_combinations", { ...HITOM_RULES, moveChains: "listed" }],
  ["reentry_not_seen", { ...HITOM_RULES, seeOnEnter: false }],
];

const COT_INSTRUCTION = "Read the following story and answer the multiple-choice question. Think step-by-step, and provide detailed explanations.";

const ANSWER_FORMATS = {
  CoTP: 'Think step by step, then end with a last line of the form "Answer: <letter>. <option>".',
  VP: 'Answer with the letter of one choice and its option ("A. green_box"), and nothing else.',
} as const;

/**
 * The option an answer chooses, as upstream's evaluators read answers: a letter ("K", "K.", "(K)",
 * "[[K]]"), a letter with its option ("K. green_drawer", the option text deciding, as upstream's
 * GPT-4 checker reads it), or the option text. A reply with reasoning is read from its last
 * "Answer:" line. Undefined when the answer names none of the choices.
 */
export function chosenOption(answer: string, choices: readonly string[]): string | undefined {
  let s = answer.trim();
  const marker = s.toLowerCase().lastIndexOf("answer:");
  if (marker >= 0) s = s.slice(marker + "answer:".length).split("\n")[0]!.trim();
  s = s.replace(/^\*+|\*+$/g, "").trim();
  const letter = /^[[(]{0,2}([A-Za-z])[\])]{0,2}(?:[.):]\s*(.*))?$/.exec(s);
  if (letter) {
    const text = letter[2]?.trim();
    if (text) {
      const byText = choices.find((c) => placeKey(c) === placeKey(text));
      if (byText !== undefined) return byText;
    }
    const i = letter[1]!.toUpperCase().charCodeAt(0) - 65;
    if (!text && i >= 0 && i < choices.length) return choices[i];
    // A single word like "a" is not a letter answer when the text names no option.
    if (text) return undefined;
  }
  return choices.find((c) => placeKey(c) === placeKey(s));
}

export class HitomBenchmark implements Benchmark<HitomBenchItem> {
  readonly name = "hitom";
  readonly title = "Hi-ToM";
  readonly types = HITOM_TYPES;
  readonly causes: Readonly<Record<string, string>> = HITOM_CAUSES;
  private readonly replays = new RecentCache<string, Promise<HitomReplay>>(256);

  load(file: string): HitomBenchItem[] {
    return readHitomFile(file).map((raw) => ({
      id: raw.id,
      index: raw.index,
      source: { file: raw.file, field: raw.field },
      type: `order_${raw.entry.question_order}`,
      splits: {
        deception: String(raw.entry.deception),
        prompting: raw.entry.prompting_type,
        length: String(raw.entry.story_length),
      },
      question: raw.entry.question,
      answer: raw.entry.answer,
      raw,
    }));
  }

  task(item: HitomBenchItem, mode: Mode): QuestionTask {
    const { entry, story, choices } = item.raw;
    const instruction = story.text.instruction ?? COT_INSTRUCTION;
    return {
      benchmark: this.name,
      itemId: item.id,
      mode,
      story: entry.story,
      question: entry.question,
      choices,
      candidates: choices,
      prompt: fill(promptTemplate("worlds/hitom/prompts/hitom-vanilla.txt"), {
        instruction,
        story: story.body,
        question: entry.question,
        choices: renderChoices(choices),
        answer_format: ANSWER_FORMATS[entry.prompting_type],
      }),
    };
  }

  /** One replay per distinct story and rules (both prompting styles share a story). */
  private replay(item: HitomBenchItem, rules: HitomRules = HITOM_RULES): Promise<HitomReplay> {
    const key = rules === HITOM_RULES ? item.raw.story.body : `${JSON.stringify(rules)}\n${item.raw.story.body}`;
    let r = this.replays.get(key);
    if (!r) {
      const opts = rules === HITOM_RULES ? {} : { rules, mentalStates: false };
      r = replayHitom(item.raw.story.scenario, locateIn(item.raw.file, `${item.raw.field}.story`), opts);
      this.replays.set(key, r);
    }
    return r;
  }

  async groundTruth(item: HitomBenchItem): Promise<GroundTruth> {
    const { episode, context } = await this.replay(item);
    const label = worldModelAnswer(episode.finalState, item.raw.question);
    const agrees = label !== undefined && label === item.raw.entry.answer;
    const gt = { context, contextId: contextIdOf(item.raw.story.body), label, agrees };
    return agrees ? gt : { ...gt, cause: await this.cause(item, label) };
  }

  private async cause(item: HitomBenchItem, label: string | undefined): Promise<keyof typeof HITOM_CAUSES> {
    if (label === undefined) return "no_world_model_answer";
    const official = item.raw.entry.answer;
    for (const [cause, rules] of GENERATOR_ERRORS) {
      const { episode } = await this.replay(item, rules);
      if (worldModelAnswer(episode.finalState, item.raw.question) === official) return cause;
    }
    const object = item.raw.question.object;
    const ofObject = item.raw.story.text.sentences.some(({ sentence: s }) => {
      switch (s.kind) {
        case "located":
        case "move":
        case "public_claim":
        case "private_claim":
          return s.object === object && s.container === official;
        default:
          return false;
      }
    });
    return ofObject ? "other" : "label_from_another_object";
  }

  /**
   * "K. option" (VP) or a last line "Answer: K. option" (CoTP); in simulation mode, whose prompt
   * (simulation-answer.txt) lists the options without letters and asks for the answer only, the option itself.
   */
  answerText(item: HitomBenchItem, label: string | readonly string[], mode: Mode): string | undefined {
    const { raw } = item;
    const i = raw.choices.indexOf(String(label));
    if (i < 0) return undefined;
    if (mode === "simulation") return raw.choices[i]!;
    const choice = `${letterOf(i)}. ${raw.choices[i]!}`;
    return raw.entry.prompting_type === "CoTP" ? `Answer: ${choice}` : choice;
  }

  judge(item: HitomBenchItem, answer: string): Verdict {
    const chosen = chosenOption(answer, item.raw.choices);
    // The item's label (the report also judges against the world model's label in its place).
    const correct = chosen !== undefined && chosen === String(item.answer);
    return { correct, detail: { chosen: chosen === undefined ? null : `${letterOf(item.raw.choices.indexOf(chosen))}. ${chosen}` } };
  }

  /** VP entries whose label differs from the CoTP entry asking the same question about the same story. */
  metrics(items: readonly HitomBenchItem[]): Readonly<Record<string, number>> {
    const cotp = new Map<string, string>();
    const key = (i: HitomBenchItem) => `${i.raw.story.body}\n${i.raw.entry.question}`;
    for (const i of items) if (i.raw.entry.prompting_type === "CoTP") cotp.set(key(i), i.raw.entry.answer);
    let pairs = 0;
    let conflicts = 0;
    for (const i of items) {
      if (i.raw.entry.prompting_type !== "VP") continue;
      const twin = cotp.get(key(i));
      if (twin === undefined) continue;
      pairs++;
      if (twin !== i.raw.entry.answer) conflicts++;
    }
    return pairs ? { vp_cotp_twin_pairs: pairs, vp_labels_differing_from_cotp_twin: conflicts } : {};
  }
}
