/**
 * A label written as the answer the benchmark's prompt asks for, so that a model fine-tuned on it
 * learns the format its evaluator reads: ToMi the container; Hi-ToM "K. option" (VP) or a last
 * line "Answer: K. option" (CoTP), and the bare option in simulation mode (whose prompt lists the
 * options without letters); FANToM "(a) option" for multiple choice, names for lists, yes/no for
 * binary questions, the text otherwise. The exporters check every such answer with
 * the benchmark's own judge.
 */
import type { BenchItem, Mode } from "../../worlds/question/benchmark.js";
import type { HitomBenchItem } from "../../worlds/hitom/benchmark.js";
import type { FantomBenchItem } from "../../worlds/fantom/benchmark.js";
import { letterOf } from "../../worlds/hitom/sentences.js";

export function answerText(benchmark: string, item: BenchItem, label: string | readonly string[], mode: Mode = "vanilla"): string | undefined {
  switch (benchmark) {
    case "hitom": {
      const { raw } = item as HitomBenchItem;
      const i = raw.choices.indexOf(String(label));
      if (i < 0) return undefined;
      // Simulation mode's prompt (simulation-answer.txt) lists the options without letters and asks
      // for the answer only: the option itself.
      if (mode === "simulation") return raw.choices[i]!;
      const choice = `${letterOf(i)}. ${raw.choices[i]!}`;
      return raw.entry.prompting_type === "CoTP" ? `Answer: ${choice}` : choice;
    }
    case "fantom": {
      const { q } = item as FantomBenchItem;
      if (q.questionType.endsWith(":multiple-choice")) {
        const i = ["a", "b"].indexOf(String(label));
        return i < 0 || !q.choices ? undefined : `(${String(label)}) ${q.choices[i]!}`;
      }
      if (Array.isArray(label)) return label.length ? label.join(", ") : "None of them.";
      if (q.questionType.endsWith(":binary")) return String(label).startsWith("no") ? "no" : String(label);
      return String(label);
    }
    default:
      return Array.isArray(label) ? label.join(", ") : String(label);
  }
}
