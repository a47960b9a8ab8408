/**
 * What every recaller is to the world: a score per item for a user with a history. The ranking
 * (ranking.ts) masks the history and keeps the top k; a merge (mixture.ts) weighs several.
 */
export interface Recaller {
  /** The name reports and the weights action use ("bpr"). */
  readonly name: string;
  /**
   * Writes one score per item (dense index; higher is recommended first) into `out`, for `user`
   * (index into the split's users) having seen `history` (oldest first).
   */
  score(user: number, history: readonly number[], out: Float64Array): void;
}
