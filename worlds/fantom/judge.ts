/**
 * FANToM's per-question rules, as the official evaluator (skywalker023/fantom, eval_fantom.py)
 * applies them to a model's response. Each function mirrors one of its methods, quirks included
 * (case-sensitive word F1 for beliefs, substring tests for names and letters), because the point
 * is to give the numbers users compare against.
 */
import { bagOfTokensF1 } from "../core/rewards/token-f1.js";
import { cosine, type Embedder } from "../core/embedder.js";

/** `parse_response`: keeps what follows the last "Answer:" (or "Choose an answer from above:"). */
export function parseResponse(response: string): string {
  if (response.includes("Answer:")) return response.split("Answer:").pop()!.trim();
  if (response.includes("Choose an answer from above:")) return response.split("Choose an answer from above:").pop()!.trim();
  return response;
}

/** Python's `str.split()` with no argument: runs of whitespace, no empty words. */
export function pySplit(s: string): string[] {
  return s.split(/\s+/).filter((w) => w !== "");
}

/** `compute_f1`: bag-of-words F1 over whitespace tokens (no lowercasing here; callers decide). */
export function wordF1(groundTruth: string, response: string): number {
  return bagOfTokensF1(pySplit(response), pySplit(groundTruth));
}

/** `evaluate_fact_q`: word F1 of the lowercased texts. */
export function judgeFact(correct: string, response: string): number {
  return wordF1(correct.toLowerCase(), response.toLowerCase());
}

export interface BeliefJudgement {
  readonly correct: boolean;
  /** Word F1 against the answer the response was judged closer to (the official `word_overlap`). */
  readonly wordOverlap: number;
  readonly similarityCorrect: number;
  readonly similarityWrong: number;
}

/**
 * `evaluate_belief_q`: right when the response's embedding is strictly closer (cosine) to the
 * correct answer than to the wrong one.
 */
export function judgeBeliefFreeForm(correct: string, wrong: string, response: string, embedder: Embedder): BeliefJudgement {
  const [w, c, r] = embedder.embed([wrong, correct, response]) as [Float32Array, Float32Array, Float32Array];
  const simWrong = cosine(r, w);
  const simCorrect = cosine(r, c);
  if (simWrong >= simCorrect) return { correct: false, wordOverlap: wordF1(wrong, response), similarityCorrect: simCorrect, similarityWrong: simWrong };
  return { correct: true, wordOverlap: wordF1(correct, response), similarityCorrect: simCorrect, similarityWrong: simWrong };
}

/** `evaluate_mc_belief_q`: `letter` is the correct option's letter ("a" or "b"). */
export function judgeMultipleChoice(letter: string, response: string): boolean {
  const r = response.toLowerCase();
  const a = letter.toLowerCase();
  return (
    r.startsWith(`(${a})`) ||
    r.startsWith(`${a})`) ||
    r.startsWith(`${a}.`) ||
    r.startsWith(`${a}:`) ||
    r.startsWith(`${a},`) ||
    r.includes(`(${a})`) ||
    a === r
  );
}

export interface ListJudgement {
  readonly correct: boolean;
  readonly excludedAwareCharacter: boolean;
  readonly includedUnawareCharacter: boolean;
}

/** `evaluate_list_q`: every correct name appears in the response and no wrong name does (substrings, any case). */
export function judgeList(correctNames: readonly string[], wrongNames: readonly string[], response: string): ListJudgement {
  const r = response.toLowerCase();
  const excluded = correctNames.some((n) => !r.includes(n.toLowerCase()));
  const included = wrongNames.some((n) => r.includes(n.toLowerCase()));
  return { correct: !(excluded || included), excludedAwareCharacter: excluded, includedUnawareCharacter: included };
}

/** `map_binary_answer_to_int`: 1 for yes, 0 for no, -1 for anything else. */
export function binarize(response: string): 1 | 0 | -1 {
  const a = response.toLowerCase().replace(/^'+|'+$/g, "").replace(/^"+|"+$/g, "");
  if (a.includes(" yes,") || a.includes(" yes ") || a.startsWith("yes") || a.includes(" yes.") || a.includes(" knows ") || a.startsWith("true")) return 1;
  if (
    a.includes(" no,") ||
    a.includes(" no ") ||
    a.startsWith("no") ||
    a.includes(" no.") ||
    a.includes(" does not know ") ||
    a.includes(" doesn't know ") ||
    a.startsWith("false")
  ) {
    return 0;
  }
  return -1;
}

/** `yesno_to_int` for the labels. */
export function yesNoToInt(label: string): 1 | 0 {
  if (label === "yes") return 1;
  if (label === "no" || label === "no:long") return 0;
  throw new Error(`not a binary label: "${label}"`);
}
