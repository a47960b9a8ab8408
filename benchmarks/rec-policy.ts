/**
 * A trained policy as the recommender's mixture agent (`bench rec --agent policy:DIR`): each test
 * user is shown what `train grpo --world rec` trains on (worlds/rec/prompts.ts: the history, each
 * recaller's first picks, the request for weights), the policy answers weights over the
 * recallers, and their merged list is scored with NDCG@k and HR@k as `scoreAction` scores it.
 * Many users are asked at once: a native policy batches concurrent turns into one generation.
 *
 * A policy that was not trained for this world is named as such, not scored as a weak one: a
 * tokenizer that cannot write the weights' JSON, a history longer than the model's context, or,
 * with `constrain=off`, not one reply that reads as weights.
 */
import { AgentFailure, type Agent, type AgentTurn } from "../worlds/core/agent.js";
import { GrammarError } from "../models/grammar/errors.js";
import { recWeightsSchema, renderObservation, scoreAction, type RecCase, type RecSplit, type RecWeights, type Recaller, type Weights } from "../worlds/rec/index.js";

export const RECOMMENDER = "recommender";

export class PolicyNotForRec extends Error {}

export interface PolicyScore {
  readonly ndcg: number;
  readonly hr: number;
  readonly n: number;
  /** Each case's NDCG@k, in the order of the cases (a reply that was no weights: 0). */
  readonly ndcgs: readonly number[];
  /** Replies that were no weights action (scored 0; only possible with `constrain=off`). */
  readonly failures: number;
  /** The policy's weights averaged over the users, each reply's normalised to sum 1 first. */
  readonly meanWeights: Weights;
}

export interface PolicyEvalOptions {
  readonly k: number;
  /** Users asked at once (one batch of the native engine). */
  readonly concurrency?: number;
  readonly onProgress?: (done: number) => void;
}

/** Asks `agent` for each case's weights over `recallers` and scores the merged list. */
export async function scorePolicy(agent: Agent, spec: string, split: RecSplit, recallers: readonly Recaller[], cases: readonly RecCase[], opts: PolicyEvalOptions): Promise<PolicyScore> {
  const names = recallers.map((r) => r.name);
  const schema = recWeightsSchema(names);
  const concurrency = opts.concurrency ?? 32;
  const ndcgs = new Array<number>(cases.length).fill(0);
  let hr = 0;
  let failures = 0;
  let done = 0;
  let firstFailure: string | undefined;
  const sums = new Float64Array(names.length);

  const ask = async (index: number): Promise<void> => {
    const c = cases[index]!;
    const user = split.users[c.user]!.user;
    const turn: AgentTurn<RecWeights> = {
      world: "rec",
      agent: RECOMMENDER,
      timestep: 0,
      // itemId seeds each user's sampling apart (lm-agent.ts).
      observation: { text: renderObservation(split, c, recallers), data: { itemId: `u${user}` } },
      actionSchema: schema,
    };
    let action: RecWeights;
    try {
      action = schema.parse((await agent.act(turn)).action);
    } catch (err) {
      if (err instanceof AgentFailure) {
        failures++;
        firstFailure ??= `${err.message} (reply ${JSON.stringify(err.partial.raw ?? "")})`;
        return;
      }
      throw notForRec(err, spec);
    }
    const s = scoreAction(action, c, split, recallers, opts.k);
    ndcgs[index] = s.ndcg;
    hr += s.hr;
    const total = names.reduce((a, n) => a + (action.weights[n] ?? 0), 0);
    if (total > 0) names.forEach((n, t) => (sums[t]! += (action.weights[n] ?? 0) / total));
  };

  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      await ask(next++);
      opts.onProgress?.(++done);
    }
  };
  // The first user alone: a policy that cannot play this world fails once, with its reason.
  if (cases.length > 0) {
    await ask(next++);
    opts.onProgress?.(++done);
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(0, cases.length - 1)) }, worker));
  if (cases.length > 0 && failures === cases.length)
    throw new PolicyNotForRec(`${spec}: not one of ${cases.length} replies was weights over ${names.join(", ")}, so it was not trained for the rec world (train it with \`train grpo --world rec\`); the first: ${firstFailure}`);
  const n = cases.length;
  const answered = n - failures;
  return {
    ndcg: n ? ndcgs.reduce((a, b) => a + b, 0) / n : 0,
    hr: n ? hr / n : 0,
    n,
    ndcgs,
    failures,
    meanWeights: Object.fromEntries(names.map((name, t) => [name, answered ? sums[t]! / answered : 0])),
  };
}

/** A policy's error on a rec turn, said as what it means here. */
function notForRec(err: unknown, spec: string): unknown {
  if (err instanceof GrammarError)
    return new PolicyNotForRec(`${spec}: its tokenizer cannot write the recommender's weights as JSON (${err.message}), so it was not trained for the rec world`);
  const message = err instanceof Error ? err.message : String(err);
  if (/position|context|too long|longer than/i.test(message))
    return new PolicyNotForRec(`${spec}: a user's observation (the last 15 films and each recaller's first picks) does not fit the model's context (${message}), so it was not trained for the rec world`);
  return err;
}
