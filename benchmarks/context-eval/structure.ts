/**
 * The structural score of a generated socialized context, by the rules of the social-world-model
 * project's context evaluation (`validate_structure` in social_world_model_eval.py), so that the
 * numbers compare with the ones it prints:
 *
 *   0.3  both `agents_names` and `socialized_context` are there (else the score is 0)
 *   0.4  x the share of timesteps whose observations and actions name exactly the agents of
 *        `agents_names` (as sets: order and repeats do not count)
 *   0.3  timesteps are the integers 0..n-1 or 1..n; 0.15 if merely non-decreasing integers;
 *        0.1 if some are not integers but every timestep has one
 *
 * An empty `socialized_context` scores 0.3. Upstream reads observations and actions as
 * {"Name": text} dicts only (a list makes it fail and skip the file); here a list of "Name: text"
 * lines names its agents by the text before the first colon, so both layouts score alike.
 * Timesteps are read as Python's int() reads them ("1", " 2 ", "+3", "1_0"; a number is
 * truncated); a step without one counts as "0", as upstream's `step.get("timestep", "0")`.
 */
import { splitAgentLine } from "../../worlds/core/socialized-context.js";

export interface StructuralScore {
  readonly score: number;
  readonly requiredFields: boolean;
  /** Share of timesteps whose observations and actions name exactly the listed agents. */
  readonly agentConsistency: number;
  readonly timesteps: "sequential" | "non_decreasing" | "out_of_order" | "not_integers" | "missing" | "none";
}

export function structuralScore(sap: unknown): StructuralScore {
  const none = (requiredFields: boolean, score: number): StructuralScore => ({ score, requiredFields, agentConsistency: 0, timesteps: "none" });
  if (!isObject(sap) || !("agents_names" in sap) || !("socialized_context" in sap)) return none(false, 0);
  let score = 0.0;
  score += 0.3;
  const agents = new Set<unknown>(Array.isArray(sap.agents_names) ? sap.agents_names : []);
  const steps = Array.isArray(sap.socialized_context) ? sap.socialized_context : [];
  if (steps.length === 0) return none(true, score);

  let consistent = 0.0;
  for (const step of steps) {
    const obs = namesOf(isObject(step) ? step.observations : undefined);
    const act = namesOf(isObject(step) ? step.actions : undefined);
    if (sameSet(obs, agents) && sameSet(act, agents)) consistent += 1.0;
  }
  consistent /= steps.length;
  score += 0.4 * consistent;

  let timesteps: StructuralScore["timesteps"];
  const ints = steps.map((s) => pyInt(isObject(s) && "timestep" in s ? s.timestep : "0"));
  if (ints.every((t): t is number => t !== undefined)) {
    if (ints.every((t, i) => t === i) || ints.every((t, i) => t === i + 1)) {
      score += 0.3;
      timesteps = "sequential";
    } else if (ints.every((t, i) => i === 0 || ints[i - 1]! <= t)) {
      score += 0.15;
      timesteps = "non_decreasing";
    } else {
      timesteps = "out_of_order";
    }
  } else if (steps.every((s) => isObject(s) && "timestep" in s)) {
    score += 0.1;
    timesteps = "not_integers";
  } else {
    timesteps = "missing";
  }
  return { score: Math.min(score, 1.0), requiredFields: true, agentConsistency: consistent, timesteps };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The agents a step's observations or actions name: dict keys, or the names of "Name: text" lines. */
function namesOf(v: unknown): Set<string> {
  if (Array.isArray(v)) return new Set(v.map((line) => (typeof line === "string" ? splitAgentLine(line).name : "")));
  if (isObject(v)) return new Set(Object.keys(v));
  return new Set();
}

function sameSet(a: ReadonlySet<unknown>, b: ReadonlySet<unknown>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/** Python's int(v) for what JSON can hold; undefined where int() raises. */
export function pyInt(v: unknown): number | undefined {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : undefined;
  if (typeof v !== "string") return undefined;
  const s = v.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(s)) return undefined;
  return Number(s.replace(/_/g, ""));
}
