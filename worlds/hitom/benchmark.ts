/**
 * Hi-ToM (He, Wu et al. 2023) as a benchmark: the upstream JSON read into items (both prompting
 * styles, each entry its own item), the world model's labels and episode for every story, scoring
 * as upstream's evaluator scores (the answer is one of the 15 choices, given as its letter or its
 * text; a VP entry against the label of the CoTP entry asking the same question, unless
 * `vpLabels: "own"`), and the official labels that disagree with the world model, each with what
 * made it: the generator's rules of the day the data was generated, or a later hand edit
 * (worlds/hitom/official-labels.ts).
 */
import type { Benchmark, BenchItem, GroundTruth, Mode, Verdict } from "../question/benchmark.js";
import { contextIdOf } from "../question/context-id.js";
import { fill, promptTemplate } from "../question/prompts.js";
import type { QuestionTask } from "../question/world.js";
import { readHitomFile, type HitomItem } from "./dataset.js";
import { worldModelAnswer } from "./questions.js";
import { replayHitom, type HitomReplay } from "./replay.js";
import { HITOM_RELEASE_RULES, HITOM_RULES, type HitomRules } from "./rules.js";
import { cotpLabels, HITOM_CAUSES, labelCause, questionKey, type HitomVpLabels } from "./official-labels.js";
import { letterOf, renderChoices } from "./sentences.js";
import { locateIn } from "./story.js";
import { RecentCache } from "../core/recent-cache.js";
import { placeKey } from "../core/place-name.js";

export const HITOM_TYPES = ["order_0", "order_1", "order_2", "order_3", "order_4"] as const;

export interface HitomBenchItem extends BenchItem {
  readonly raw: HitomItem;
  /** Whether `answer` comes from a CoT file: a CoTP entry, or a VP entry scored against its CoTP twin. */
  readonly labelFromCot: boolean;
}

export { HITOM_CAUSES };

export interface HitomOptions {
  /** What VP entries are scored against: the CoTP twin's label (upstream's evaluator; default) or their own. */
  readonly vpLabels?: HitomVpLabels;
}

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

  readonly vpLabels: HitomVpLabels;

  constructor(opts: HitomOptions = {}) {
    this.vpLabels = opts.vpLabels ?? "cotp";
  }

  load(file: string): HitomBenchItem[] {
    const raws = readHitomFile(file);
    const cotp = this.vpLabels === "cotp" ? cotpLabels(raws.map((r) => ({ body: r.story.body, entry: r.entry }))) : new Map<string, string>();
    return raws.map((raw) => {
      const twin = raw.entry.prompting_type === "VP" ? cotp.get(questionKey(raw.story.body, raw.entry.question)) : undefined;
      return {
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
        answer: twin ?? raw.entry.answer,
        labelFromCot: raw.entry.prompting_type === "CoTP" || twin !== undefined,
        raw,
      };
    });
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
    const official = String(item.answer);
    const agrees = label !== undefined && label === official;
    const gt = { context, contextId: contextIdOf(item.raw.story.body), label, agrees };
    if (agrees) return gt;
    const generated = worldModelAnswer((await this.replay(item, HITOM_RELEASE_RULES)).episode.finalState, item.raw.question);
    const cause = labelCause({ official, worldModel: label, generated, fromCot: item.labelFromCot }) ?? "other";
    return { ...gt, cause, ...(generated !== undefined && generated !== official ? { note: `generated: ${generated}` } : {}) };
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
    return { correct, detail: { chosen: chosen === undefined ? null : `${letterOf(item.raw.choices.indexOf(chosen))}. ${chosen}`, option: chosen ?? null } };
  }

  /**
   * VP entries with a CoTP twin (the same question about the same story), those whose own label
   * differs from the twin's, how many were scored against the twin's label, and the VP answers
   * right by either label (the other convention's score, for comparison).
   */
  metrics(items: readonly HitomBenchItem[], verdicts: readonly Verdict[]): Readonly<Record<string, number>> {
    const cotp = cotpLabels(items.map((i) => ({ body: i.raw.story.body, entry: i.raw.entry })));
    let pairs = 0;
    let conflicts = 0;
    let scoredAgainstTwin = 0;
    let rightByOwn = 0;
    let rightByTwin = 0;
    items.forEach((i, n) => {
      if (i.raw.entry.prompting_type !== "VP") return;
      const twin = cotp.get(questionKey(i.raw.story.body, i.raw.entry.question));
      if (twin === undefined) return;
      pairs++;
      if (twin !== i.raw.entry.answer) conflicts++;
      if (i.labelFromCot) scoredAgainstTwin++;
      const option = verdicts[n]?.detail?.option;
      if (option === i.raw.entry.answer) rightByOwn++;
      if (option === twin) rightByTwin++;
    });
    return pairs
      ? {
          vp_cotp_twin_pairs: pairs,
          vp_labels_differing_from_cotp_twin: conflicts,
          vp_scored_against_cotp_twin: scoredAgainstTwin,
          vp_correct_by_cotp_twin_labels: rightByTwin,
          vp_correct_by_own_labels: rightByOwn,
        }
      : {};
  }
}
