/**
 * Several point sources as one (self-play's quiz questions and played turns): their points one
 * after another, each group logged by the source its point came from. The trainer draws from the
 * whole in a seeded shuffle, so the order here does not weight one source over another.
 */
import { createHash } from "node:crypto";
import type { EpisodeLog } from "../../store/episode-log.js";
import type { DecisionPoint, PointSource, ScoredReply } from "./decision-point.js";

export class JoinedPoints implements PointSource {
  readonly description: string;
  readonly dataId: string;
  readonly size: number;
  readonly runParams: Record<string, unknown>;
  /** Where each point handed out came from, for its group's log record. */
  private readonly origin = new WeakMap<DecisionPoint, PointSource>();

  constructor(
    private readonly sources: readonly PointSource[],
    description?: string,
  ) {
    if (sources.length === 0) throw new Error("no point sources to join");
    this.size = sources.reduce((n, s) => n + s.size, 0);
    this.description = description ?? sources.map((s) => s.description).join(" + ");
    this.dataId = createHash("sha256").update(sources.map((s) => s.dataId).join("|")).digest("hex").slice(0, 16);
    this.runParams = { sources: sources.map((s) => s.runParams) };
  }

  async point(index: number): Promise<DecisionPoint> {
    const [s, at] = this.locate(index);
    const p = await s.point(at);
    this.origin.set(p, s);
    return p;
  }

  /** A point's kind in its own source; a source without kinds (played turns) is one kind, named by its place here. */
  kind(index: number): string {
    const [s, at] = this.locate(index);
    return s.kind?.(at) ?? `source ${this.sources.indexOf(s)}`;
  }

  private locate(index: number): [PointSource, number] {
    let at = index;
    for (const s of this.sources) {
      if (at < s.size) return [s, at];
      at -= s.size;
    }
    throw new RangeError(`point ${index} of ${this.size}`);
  }

  markLogged(contextIds: Iterable<string>): void {
    const ids = [...contextIds];
    for (const s of this.sources) (s as { markLogged?(ids: Iterable<string>): void }).markLogged?.(ids);
  }

  logGroup(log: EpisodeLog, runId: string, point: DecisionPoint, replies: readonly ScoredReply[], meta: { step: number; group: number; prompt: string }): Promise<void> {
    const source = this.origin.get(point);
    if (!source) throw new Error(`point ${point.id} was not handed out by this source`);
    return source.logGroup(log, runId, point, replies, meta);
  }
}
