/**
 * FANToM's report, computed as eval_fantom.py's `score_and_analyze` computes it (pandas group-bys
 * turned into loops), for the inaccessible scenario (the FANToM scores) and the accessible one
 * (the control task). Values are what the official report prints: `round(v, 3) * 100`.
 * A metric whose pandas computation would be NaN (no questions of that kind) is left out.
 */

export type Scenario = "inaccessible" | "accessible";
export type Aggregation = "set" | "part" | "conversation";

/** One evaluated question, as a row of the official data frame. */
export interface ScoredRow {
  readonly setId: string;
  readonly questionType: string;
  /** `missed_info_accessibility` of the question (after the full-context adjustments). */
  readonly scenario: string | undefined;
  readonly question: string;
  readonly tomType?: string;
  /** Binary questions: the label ("yes", "no", "no:long"). */
  readonly correctAnswer?: string;
  /** `result`: a boolean, or the word F1 for fact questions. */
  readonly result: boolean | number;
  readonly wordOverlap?: number;
  readonly binarized?: 1 | 0 | -1;
  /** The (parsed) response, for the list questions' per-character analysis. */
  readonly prediction?: string;
}

/** Python's `round(x, 3)` (round-half-even on the exact binary value), then `* 100`. */
export function officialPercent(x: number): number {
  return pyRound(x, 3) * 100;
}

export function pyRound(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const scale = 10 ** digits;
  // A tie needs x * 2 * 10^digits to be an odd integer exactly; with digits <= 3 that only happens
  // for x = k / 2^m with small m, where these products are exact in binary.
  const twice = x * 2 * scale;
  if (Number.isInteger(x * 1024) && Number.isInteger(twice) && Math.abs(twice) % 2 === 1) {
    const lower = Math.floor(x * scale);
    const even = lower % 2 === 0 ? lower : lower + 1;
    return Number(`${even}e-${digits}`);
  }
  return Number(x.toFixed(digits));
}

function mean(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

function num(r: boolean | number): number {
  return typeof r === "boolean" ? (r ? 1 : 0) : r;
}

/** The group key of a set id for the aggregation target ("12-0-3" -> "12-0-3", "12-0", "12"). */
export function aggregationKey(setId: string, target: Aggregation): string {
  const parts = setId.split("-");
  if (target === "conversation") return parts[0]!;
  if (target === "part") return parts.slice(0, 2).join("-");
  return setId;
}

/** `groupby(key)['result'].all().mean()`. */
function allPerGroup(rows: readonly ScoredRow[], key: (r: ScoredRow) => string): number | undefined {
  const groups = new Map<string, boolean>();
  for (const r of rows) {
    const k = key(r);
    groups.set(k, (groups.get(k) ?? true) && Boolean(r.result));
  }
  return mean([...groups.values()].map((b) => (b ? 1 : 0)));
}

/**
 * sklearn's `f1_score(references, predictions, average="weighted")` (what evaluate's "f1"
 * computes; `pos_label` is ignored under weighted averaging): per-label F1 over the labels seen
 * in either list, weighted by each label's support among the references.
 */
export function weightedF1(references: readonly number[], predictions: readonly number[]): number {
  if (references.length !== predictions.length) throw new Error("weightedF1: lists of different lengths");
  const labels = [...new Set([...references, ...predictions])].sort((a, b) => a - b);
  let weighted = 0;
  let support = 0;
  for (const l of labels) {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    let sup = 0;
    for (let i = 0; i < references.length; i++) {
      const t = references[i] === l;
      const p = predictions[i] === l;
      if (t) sup++;
      if (t && p) tp++;
      else if (p) fp++;
      else if (t) fn++;
    }
    const f1 = tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
    weighted += f1 * sup;
    support += sup;
  }
  return support === 0 ? 0 : weighted / support;
}

/** `binary_qas['question'].map(lambda x: x.removeprefix("Does ").split(" know")[0].lower())`. */
export function binaryTarget(question: string): string {
  const q = question.startsWith("Does ") ? question.slice(5) : question;
  return q.split(" know")[0]!.toLowerCase();
}

/** `x.lower().split("does ")[1].split()[0].lower()`; undefined where pandas would raise. */
export function beliefTarget(question: string): string | undefined {
  const after = question.toLowerCase().split("does ")[1];
  if (after === undefined) return undefined;
  return after.split(/\s+/).filter((w) => w !== "")[0];
}

/** The yes/no label as `yesno_to_int` maps it. */
function labelInt(label: string | undefined): number {
  return label === "yes" ? 1 : label === "no" || label === "no:long" ? 0 : -1;
}

function put(report: Record<string, number>, key: string, value: number | undefined): void {
  if (value !== undefined && Number.isFinite(value)) report[key] = officialPercent(value);
}

/** `score_and_analyze(df, target_scenario)`: the metrics of one scenario. */
export function scenarioReport(rows: readonly ScoredRow[], scenario: Scenario, aggregation: Aggregation = "set"): Record<string, number> {
  const report: Record<string, number> = {};
  const key = (r: ScoredRow) => aggregationKey(r.setId, aggregation);
  const tom = rows.filter((r) => r.questionType.startsWith("tom"));
  const target = tom.filter((r) => r.scenario === scenario);
  const p = `${scenario}:`;

  put(report, `${p}set:ALL*`, allPerGroup(target, key));
  const forAll = new Set([
    `tom:belief:${scenario}:multiple-choice`,
    "tom:answerability:list",
    "tom:answerability:binary",
    "tom:info_accessibility:list",
    "tom:info_accessibility:binary",
  ]);
  put(report, `${p}set:ALL`, allPerGroup(target.filter((r) => forAll.has(r.questionType)), key));

  put(report, `${p}belief:multiple-choice`, mean(target.filter((r) => r.questionType.endsWith(":multiple-choice")).map((r) => num(r.result))));
  const freeForm = target.filter((r) => r.questionType === `tom:belief:${scenario}`);
  put(report, `${p}belief:distance`, mean(freeForm.map((r) => num(r.result))));
  put(report, `${p}belief_true_word-f1`, mean(freeForm.filter((r) => r.result === true).map((r) => r.wordOverlap ?? 0)));

  for (const kind of ["answerability", "info_accessibility"] as const) {
    put(report, `${p}${kind}:set:ALL`, allPerGroup(target.filter((r) => r.questionType.startsWith(`tom:${kind}`)), key));
    put(report, `${p}${kind}:list`, mean(target.filter((r) => r.questionType === `tom:${kind}:list`).map((r) => num(r.result))));
    const binary = target.filter((r) => r.questionType === `tom:${kind}:binary`);
    if (binary.length) {
      put(report, `${p}${kind}:binary-f1`, weightedF1(binary.map((r) => labelInt(r.correctAnswer)), binary.map((r) => r.binarized ?? -1)));
    }
  }

  put(report, "fact_word-f1", mean(rows.filter((r) => r.questionType.startsWith("fact")).map((r) => num(r.result))));

  // Belief (free-form) accuracy by ToM order, then by exact tom_type (cyclic / acyclic). The
  // official code reports the share of True per group and omits groups with no True at all;
  // we report those as 0 rather than leave the reader guessing.
  const beliefs = tom.filter((r) => r.questionType === `tom:belief:${scenario}`);
  const byGroup = (f: (r: ScoredRow) => string | undefined) => {
    const groups = new Map<string, number[]>();
    for (const r of beliefs) {
      const g = f(r);
      if (g === undefined) continue;
      let list = groups.get(g);
      if (!list) groups.set(g, (list = []));
      list.push(num(r.result));
    }
    for (const [g, xs] of [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0]))) put(report, `${p}${g}`, mean(xs));
  };
  byGroup((r) => r.tomType?.split(":")[0]);
  byGroup((r) => r.tomType);

  Object.assign(report, characterReport(target, p, key));
  return report;
}

/**
 * The per-character analysis: every binary question, belief question, and the list answer
 * "tiled" onto each character a binary question asks about (is the character named in the list
 * answer?), grouped by (set, character). ALL_character: all of a character's questions right;
 * character_answer_consistency: the binary and list answers about a character all agree.
 */
function characterReport(target: readonly ScoredRow[], p: string, key: (r: ScoredRow) => string): Record<string, number> {
  const report: Record<string, number> = {};
  const results = new Map<string, boolean>();
  const answers = new Map<string, Set<number>>();
  const note = (group: string, character: string, result: boolean, answer?: number) => {
    const k = `${group}\u0000${character}`;
    results.set(k, (results.get(k) ?? true) && result);
    if (answer !== undefined) {
      let s = answers.get(k);
      if (!s) answers.set(k, (s = new Set()));
      s.add(answer);
    }
  };
  const binaries = target.filter((r) => r.questionType.endsWith(":binary"));
  for (const r of binaries) note(key(r), binaryTarget(r.question), Boolean(r.result), r.binarized ?? -1);
  for (const r of target.filter((r) => r.questionType.startsWith("tom:belief"))) {
    const who = beliefTarget(r.question);
    if (who !== undefined) note(key(r), who, Boolean(r.result));
  }
  for (const kind of ["answerability", "info_accessibility"]) {
    const lists = target.filter((r) => r.questionType.endsWith(`${kind}:list`));
    for (const b of binaries.filter((r) => r.questionType.startsWith(`tom:${kind}:`))) {
      const who = binaryTarget(b.question);
      for (const l of lists) {
        if (key(l) !== key(b) || l.prediction === undefined) continue;
        const named = l.prediction.toLowerCase().includes(who);
        // pandas counts True and 1 (False and 0) as one value in nunique.
        note(key(b), who, named === (b.correctAnswer === "yes"), named ? 1 : 0);
      }
    }
  }
  if (results.size) put(report, `${p}set:ALL_character`, mean([...results.values()].map((b) => (b ? 1 : 0))));
  if (answers.size) put(report, `${p}set:character_answer_consistency`, mean([...answers.values()].map((s) => (s.size === 1 ? 1 : 0))));
  return report;
}

/** Both scenarios, as the official `run_reports` gives them (fact_word-f1 is shared). */
export function officialReport(rows: readonly ScoredRow[], aggregation: Aggregation = "set"): Record<string, number> {
  return { ...scenarioReport(rows, "inaccessible", aggregation), ...scenarioReport(rows, "accessible", aggregation) };
}
