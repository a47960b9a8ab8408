/**
 * A decision point: one place where a policy must act, with what it takes to score any reply. For
 * a benchmark it is a question (the prompt a policy is asked, the official judge); for a world, an
 * agent's turn (its observation, the world's action schema, and the action the story's script
 * took there as the reference, or the world's own reward where it scores any action).
 */
import type { z } from "zod";
import type { ChatMessage } from "../../models/chat-template.js";
import type { ConstraintSpec } from "../../models/grammar/index.js";
import type { FormatResult } from "../../worlds/core/rewards/strict-format.js";
import type { EpisodeLog } from "../../store/episode-log.js";
import type { LevelRequest } from "../../agents/policy/level-decoding.js";

export interface DecisionPoint {
  /** Stable across runs (data position, logs). */
  readonly id: string;
  /** The conversation the policy answers (rendered with the checkpoint's chat template). */
  readonly messages: readonly ChatMessage[];
  /** The world's action schema: a reply that does not parse against it fails the strict format. */
  readonly schema: z.ZodType<unknown>;
  /**
   * The actions valid here, where the world lists them (a ToMi question's containers): what
   * `constrain: options` samples among, as the policy agent's `constrain=options` answers.
   */
  readonly options?: readonly unknown[];
  /**
   * The grammar replies are sampled under (unless constrain is off) where it is not the action
   * schema's: a question over a compact context is answered by citing one of its lines.
   */
  readonly grammar?: ConstraintSpec;
  /**
   * The answer level by level, where the point's answer has levels (usersim's hierarchy): what
   * per-level generation samples (agents/policy/level-decoding.ts), each level by its own prompt
   * (`messages` is the joint one), grammar and budget.
   */
  readonly levels?: LevelRequest;
  /** The strict format where `grammar` replaces the schema's: the action a reply gives, or why it gives none. */
  strict?(text: string): FormatResult<unknown>;
  /** The reference as text, for token F1 and ROUGE-L. */
  readonly reference: string;
  /**
   * How right a well-formed action is, in [0, 1]: exact answer match, or, where the world scores
   * any action itself (scored-points.ts), its graded reward.
   */
  exact(action: unknown): number;
  /** A well-formed action as text, for token F1 and ROUGE-L against the reference. */
  answerText(action: unknown): string;
  /** ROUGE-L of that text against the reference, where the world tokenizes its own way (default: worlds/core/rewards/rouge-l.ts). */
  rougeL?(text: string): number;
  /**
   * How many facts a reply states (its action, and its text) that the acting agent never
   * perceived (the leak audit). Absent where a reply cannot leak (a benchmark's respondent has
   * read the whole story).
   */
  leaks?(action: unknown, text: string): number;
  /**
   * A reply that writes its own context (`context=self`, worlds/core/written-context.ts): the share
   * of its trace's lines right against the world model's trace, in [0, 1] (what the `trace` reward
   * weighs). Absent where a reply writes no context.
   */
  trace?(text: string): number;
  /**
   * A world's own judge of the replies to this point, a group at a time (an LLM judge scores a
   * group in one request): where there is one, it replaces the strict JSON format check and the
   * exact / F1 / ROUGE-L parts. The reply is the world's text form (usersim's tagged hierarchy);
   * a reply it finds malformed gets --format-failure, a well-formed one the judge's reward.
   */
  judge?(texts: readonly string[]): Promise<readonly Judged[]>;
}

/** A judge's verdict on one reply (DecisionPoint.judge). */
export interface Judged {
  /** Whether the reply keeps the world's format. */
  readonly format: boolean;
  readonly formatError?: string;
  /** The reply as the world reads it (logged; absent when malformed). */
  readonly action?: unknown;
  /** The judge's reward of a well-formed reply. */
  readonly reward: number;
  /** The judge's score in [0, 1] (what `exact` reports: 1 is a perfect reply). */
  readonly score: number;
  /**
   * An answer written in levels (usersim's hierarchy): each level's own score, in the levels'
   * order (null: the judge has no ground truth for that level). What `credit: level` rewards.
   */
  readonly levels?: readonly (number | null)[];
}

/** One sampled reply, scored. */
export interface ScoredReply {
  readonly text: string;
  readonly tokens: number;
  readonly finish: string;
  readonly reward: number;
  readonly format: boolean;
  readonly formatError?: string;
  readonly action?: unknown;
  readonly exact: number;
  readonly f1: number;
  readonly rougeL: number;
  readonly overlong: number;
  /** Facts the reply states that its agent never perceived (counted when the leak penalty is on). */
  readonly leaks?: number;
  /** The share of its written trace's lines right (counted when the trace reward is on). */
  readonly trace?: number;
  /** Sum of the sampler's log-probs of the reply's tokens. */
  readonly logprob: number;
  /** Each level's reward, where the judge scored the levels (Judged.levels): what `credit: level` uses. */
  readonly levelRewards?: readonly number[];
}

/** Where decision points come from, in a fixed order the trainer walks through. */
export interface PointSource {
  /** "bench tomi fb_all_train.txt (simulation)", "world tomi". */
  readonly description: string;
  /** Identifies the data, so that a resumed run refuses other data. */
  readonly dataId: string;
  /** How many points there are (a world's points are generated: a fixed number per pass). */
  readonly size: number;
  /** Point `index` (0 <= index < size). */
  point(index: number): Promise<DecisionPoint>;
  /**
   * What kind of point `index` is (a benchmark question's type), known without making the point:
   * what `balance: type` draws in equal shares. A source without kinds is one kind.
   */
  kind?(index: number): string;
  /** What a run registers in the store (`runs list`, exports). */
  readonly runParams: Record<string, unknown>;
  /** Writes the group of replies sampled at `point` as episodes. */
  logGroup(log: EpisodeLog, runId: string, point: DecisionPoint, replies: readonly ScoredReply[], meta: { step: number; group: number; prompt: string }): Promise<void>;
}
