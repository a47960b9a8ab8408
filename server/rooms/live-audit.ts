/**
 * The live information-leak audit of a room's episode (a room with `audit: true`; docs/audit.md):
 * each timestep's actions audited as the loop records it, the leaks marked on the world's
 * timeline (which only spectators hold), and the whole episode audited again for its log record
 * with what the live pass lacks (structured actions, a model's raw output). The simulation and
 * social rooms both use it.
 */
import type { Episode, TimestepRecord } from "../../worlds/core/episode.js";
import { auditContext, LeakAuditor, type EpisodeAudit, type FactSource } from "../../worlds/core/leak-audit.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import type { SocializedContext } from "../../worlds/core/socialized-context.js";

export class LiveAudit {
  private readonly auditor: LeakAuditor;

  private constructor(
    private readonly names: readonly string[],
    private readonly facts: ReturnType<FactSource["forEpisode"]>,
  ) {
    this.auditor = new LeakAuditor(names, facts.vocabulary, facts.initialTruths);
  }

  /** The audit of an episode of `names` from `initialState`; undefined when the world has no fact vocabulary. */
  static of(source: FactSource | undefined, names: readonly string[], initialState: unknown): LiveAudit | undefined {
    // Names and initial truths come from the initial state; the context is read a timestep at a time.
    const facts = source?.forEpisode({ agents_names: [...names], socialized_context: [] }, initialState);
    return facts ? new LiveAudit(names, facts) : undefined;
  }

  /** The leaks of one recorded timestep's actions, as the world's step carries them (JSON; "" when none). */
  step(rec: TimestepRecord): string {
    const leaks = this.auditor.step(toSocializedContext({ agents: this.names, steps: [rec] }, { mentalStates: false }).socialized_context[0]!);
    return leaks.length ? JSON.stringify(leaks) : "";
  }

  /** The played episode's audit for its log record, with each turn's structured action and raw reply. */
  final(context: SocializedContext, episode: Episode): EpisodeAudit {
    return auditContext(context, this.facts.vocabulary, {
      initialTruths: this.facts.initialTruths,
      turns: episode.turns.map((t) => ({ agent: t.agent, timestep: t.timestep, action: t.action, actionText: t.actionText, ...(t.raw ? { raw: t.raw } : {}) })),
    });
  }
}
