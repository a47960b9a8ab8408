/**
 * FANToM (Kim et al., EMNLP 2023) as a benchmark: the official `fantom_v1.json` layout read into
 * the questions the official evaluator asks (questions.ts), its prompt formats, its scoring rules
 * (judge.ts) and its report (metrics.ts), for the inaccessible (FANToM) and accessible (control)
 * scenarios. The world model replays each set's conversation and answers every question itself;
 * official labels it disputes are grouped by cause.
 *
 * Options come from the environment (the `bench` command has no benchmark-specific flags):
 *   SOCIALWORLD_FANTOM_CONTEXT=short|full          the conversation given (official default: short)
 *   SOCIALWORLD_FANTOM_EMBEDDER=lexical|onnx:DIR   free-form belief scoring (default: lexical)
 *   SOCIALWORLD_FANTOM_AGGREGATION=set|part|conversation   what ALL* and ALL group by (default: set)
 */
import { basename } from "node:path";
import { z } from "zod";
import type { Benchmark, BenchItem, GroundTruth, Mode, Verdict } from "../question/benchmark.js";
import { fill, promptTemplate } from "../question/prompts.js";
import { contextIdOf } from "../question/context-id.js";
import type { QuestionTask } from "../question/world.js";
import { DataError } from "../core/errors.js";
import { LexicalEmbedder, type Embedder } from "../core/embedder.js";
import { createEmbedder } from "../core/embedder-spec.js";
import { RecentCache } from "../core/recent-cache.js";
import { readFantomFile, type FantomSet } from "./format.js";
import { flattenFantom, type ContextMode, type FantomQuestion } from "./questions.js";
import { binarize, judgeBeliefFreeForm, judgeFact, judgeList, judgeMultipleChoice, parseResponse, yesNoToInt } from "./judge.js";
import { officialReport, type Aggregation, type ScoredRow } from "./metrics.js";
import { FANTOM_CAUSES, modelSet, worldLabel, type SetModel } from "./labels.js";
import { parseContext } from "./conversation.js";

export interface FantomBenchItem extends BenchItem {
  readonly q: FantomQuestion;
  readonly set: FantomSet;
}

/** Report rows, named with the official metric names (scenario first, as the official report does). */
export const FANTOM_TYPES = (["inaccessible", "accessible"] as const).flatMap((s) => [
  `${s}:belief:multiple-choice`,
  `${s}:belief:distance`,
  `${s}:answerability:list`,
  `${s}:answerability:binary`,
  `${s}:info_accessibility:list`,
  `${s}:info_accessibility:binary`,
]);

function typeOf(q: FantomQuestion): string {
  const t = q.questionType;
  if (t.startsWith("fact")) return "fact";
  const s = q.scenario ?? "unknown";
  if (t.endsWith(":multiple-choice")) return `${s}:belief:multiple-choice`;
  if (t.startsWith("tom:belief:")) return `${s}:belief:distance`;
  return `${s}:${t.replace(/^tom:/, "")}`;
}

const Env = z.object({
  SOCIALWORLD_FANTOM_CONTEXT: z.enum(["short", "full"]).default("short"),
  SOCIALWORLD_FANTOM_EMBEDDER: z.string().regex(/^(lexical|onnx:.+)$/, "expected lexical or onnx:DIR").default("lexical"),
  SOCIALWORLD_FANTOM_AGGREGATION: z.enum(["set", "part", "conversation"]).default("set"),
});

export interface FantomOptions {
  readonly context?: ContextMode;
  /** "lexical", "onnx:DIR", or an embedder. */
  readonly embedder?: string | Embedder;
  readonly aggregation?: Aggregation;
}

export class FantomBenchmark implements Benchmark<FantomBenchItem> {
  readonly name = "fantom";
  readonly types = [...FANTOM_TYPES, "fact"];
  readonly causes: Readonly<Record<string, string>> = FANTOM_CAUSES;
  readonly context: ContextMode;
  readonly aggregation: Aggregation;
  private readonly embedderSpec: string;
  private embedderNow: Embedder | undefined;
  private embedderLoading: Promise<Embedder> | undefined;
  private readonly models = new RecentCache<string, Promise<SetModel>>(64);

  /** Options not given are read from the environment (see the file comment). */
  constructor(opts: FantomOptions = {}) {
    const env = Env.safeParse({
      SOCIALWORLD_FANTOM_CONTEXT: process.env.SOCIALWORLD_FANTOM_CONTEXT || undefined,
      SOCIALWORLD_FANTOM_EMBEDDER: process.env.SOCIALWORLD_FANTOM_EMBEDDER || undefined,
      SOCIALWORLD_FANTOM_AGGREGATION: process.env.SOCIALWORLD_FANTOM_AGGREGATION || undefined,
    });
    if (!env.success) {
      const issue = env.error.issues[0]!;
      throw new DataError(`$${String(issue.path[0])}`, {}, issue.message);
    }
    this.context = opts.context ?? env.data.SOCIALWORLD_FANTOM_CONTEXT;
    this.aggregation = opts.aggregation ?? env.data.SOCIALWORLD_FANTOM_AGGREGATION;
    const e = opts.embedder ?? env.data.SOCIALWORLD_FANTOM_EMBEDDER;
    if (typeof e === "string") {
      this.embedderSpec = e;
      if (e === "lexical") this.embedderNow = new LexicalEmbedder();
    } else {
      this.embedderSpec = e.id;
      this.embedderNow = e;
    }
  }

  get title(): string {
    return `FANToM (${this.context} context, free-form beliefs judged with ${this.embedderNow?.id ?? this.embedderSpec})`;
  }

  /** Loads the embedder (the ONNX one loads its model); judge needs it. */
  async ready(): Promise<Embedder> {
    if (this.embedderNow) return this.embedderNow;
    this.embedderLoading ??= createEmbedder(this.embedderSpec);
    this.embedderNow = await this.embedderLoading;
    return this.embedderNow;
  }

  load(file: string): FantomBenchItem[] {
    const sets = readFantomFile(file);
    // Conversations that do not parse stop the run here, before anything is asked.
    sets.forEach((s, i) => parseContext(this.context === "short" ? s.short_context : s.full_context, file, `[${i}].${this.context}_context`));
    const name = basename(file);
    return flattenFantom(sets, this.context).map((q, index) => ({
      id: `${name}#${q.setId}/${q.key}`,
      index,
      source: { file, field: q.field },
      type: typeOf(q),
      question: askedQuestion(q),
      answer: q.correct,
      q,
      set: sets[q.setIndex]!,
    }));
  }

  task(item: FantomBenchItem, mode: Mode): QuestionTask {
    const q = item.q;
    const template = { question: "fantom-question", choice: "fantom-choice", target: "fantom-target", information: "fantom-information" }[q.promptKind];
    const prompt = fill(promptTemplate(`worlds/fantom/prompts/${template}.txt`), { context: q.context, question: q.question, fact_question: q.factQuestion, fact_answer: q.factAnswer });
    return {
      benchmark: this.name,
      itemId: item.id,
      mode,
      story: q.context,
      question: item.question,
      ...(q.choices ? { choices: q.choices.map((c, i) => `(${"ab"[i]}) ${c}`) } : {}),
      candidates: candidatesOf(q),
      prompt,
    };
  }

  private model(item: FantomBenchItem): Promise<SetModel> {
    const key = `${item.source.file}#${item.q.setIndex}`;
    let m = this.models.get(key);
    if (!m) {
      m = modelSet(item.set, item.q.setIndex, this.context, item.source.file);
      // Sets are contiguous in the file: old ones are not needed again.
      this.models.set(key, m);
    }
    return m;
  }

  async groundTruth(item: FantomBenchItem): Promise<GroundTruth> {
    await this.ready();
    const model = await this.model(item);
    const w = worldLabel(model, item.q);
    return {
      context: model.replay.context,
      contextId: contextIdOf(item.q.context),
      label: w.label,
      agrees: w.agrees,
      ...(w.cause ? { cause: w.cause } : {}),
    };
  }

  /** "(a) option" for multiple choice, names for lists, yes/no for binary questions, the text otherwise. */
  answerText(item: FantomBenchItem, label: string | readonly string[]): string | undefined {
    const { q } = item;
    if (q.questionType.endsWith(":multiple-choice")) {
      const i = ["a", "b"].indexOf(String(label));
      return i < 0 || !q.choices ? undefined : `(${String(label)}) ${q.choices[i]!}`;
    }
    if (Array.isArray(label)) return label.length ? label.join(", ") : "None of them.";
    if (q.questionType.endsWith(":binary")) return String(label).startsWith("no") ? "no" : String(label);
    return String(label);
  }

  judge(item: FantomBenchItem, answer: string): Verdict {
    const q = item.q;
    const response = parseResponse(answer);
    const t = q.questionType;
    if (t.startsWith("fact")) {
      const f1 = judgeFact(String(item.answer), response);
      return { correct: f1 === 1, score: f1, detail: { wordF1: f1 } };
    }
    if (t.endsWith(":multiple-choice")) return { correct: judgeMultipleChoice(String(item.answer), response) };
    if (t.startsWith("tom:belief:")) {
      const embedder = this.embedderNow;
      if (!embedder) throw new Error(`the ${this.embedderSpec} embedder is not loaded yet (await benchmark.ready())`);
      const correct = String(item.answer);
      // Judged against the other of the two answers (the world model's label may be either).
      const wrong = [String(q.correct), String(q.wrong)].find((x) => x !== correct) ?? String(q.wrong);
      const j = judgeBeliefFreeForm(correct, wrong, response, embedder);
      return {
        correct: j.correct,
        detail: { wordOverlap: j.wordOverlap, similarityCorrect: j.similarityCorrect, similarityWrong: j.similarityWrong },
      };
    }
    if (t.endsWith(":list")) {
      const names = item.answer as readonly string[];
      const everyone = [...(q.correct as readonly string[]), ...((q.wrong as readonly string[] | undefined) ?? [])];
      const j = judgeList(names, everyone.filter((n) => !names.includes(n)), response);
      return {
        correct: j.correct,
        detail: { excludedAwareCharacter: j.excludedAwareCharacter, includedUnawareCharacter: j.includedUnawareCharacter, prediction: response },
      };
    }
    const b = binarize(response);
    return { correct: b === yesNoToInt(String(item.answer)), detail: { binarized: b } };
  }

  metrics(items: readonly FantomBenchItem[], verdicts: readonly Verdict[]): Readonly<Record<string, number>> {
    const rows: ScoredRow[] = items.map((it, i) => {
      const v = verdicts[i]!;
      const d = (v.detail ?? {}) as { wordOverlap?: number; binarized?: 1 | 0 | -1; prediction?: string };
      const q = it.q;
      return {
        setId: q.setId,
        questionType: q.questionType,
        scenario: q.scenario,
        question: q.question,
        ...(q.tomType ? { tomType: q.tomType } : {}),
        ...(typeof q.correct === "string" ? { correctAnswer: q.correct } : {}),
        result: q.questionType.startsWith("fact") ? (v.score ?? 0) : v.correct,
        ...(d.wordOverlap !== undefined ? { wordOverlap: d.wordOverlap } : {}),
        ...(d.binarized !== undefined ? { binarized: d.binarized } : {}),
        ...(d.prediction !== undefined ? { prediction: d.prediction } : {}),
      };
    });
    return officialReport(rows, this.aggregation);
  }
}

/** The question as it follows the conversation in the prompt (without the closing "Answer:"). */
function askedQuestion(q: FantomQuestion): string {
  if (q.promptKind === "target") return `Target: ${q.factQuestion}\nQuestion: ${q.question}`;
  if (q.promptKind === "information") return `Information: ${q.factQuestion} ${q.factAnswer}\nQuestion: ${q.question}`;
  return q.question;
}

/** What a random baseline (or a person's answer form) chooses from. */
function candidatesOf(q: FantomQuestion): string[] {
  const t = q.questionType;
  if (t.endsWith(":multiple-choice")) return ["(a)", "(b)"];
  if (t.endsWith(":binary")) return ["yes", "no"];
  if (t.startsWith("tom:belief:")) return [String(q.correct), String(q.wrong)].sort();
  const speakers = [...new Set(parseContext(q.context, "context", "context").map((u) => u.speaker))];
  if (t.endsWith(":list")) {
    const subsets: string[] = ["none of them"];
    const n = Math.min(speakers.length, 8);
    for (let mask = 1; mask < 1 << n; mask++) subsets.push(speakers.filter((_, i) => mask & (1 << i)).join(", "));
    return subsets;
  }
  return parseContext(q.context, "context", "context").map((u) => u.text);
}
