/**
 * DAPO's soft overlong punishment: a reply longer than maxNewTokens - buffer tokens loses reward
 * linearly, up to `penalty` at the limit (`min(-(length - (max - buffer)) / buffer * penalty, 0)`,
 * as verl's DAPO reward manager computes it). 0 when the buffer is 0 (off).
 */
export function overlongPenalty(length: number, maxNewTokens: number, buffer: number, penalty: number): number {
  if (buffer <= 0) return 0;
  const expected = maxNewTokens - buffer;
  const exceed = length - expected;
  return Math.min((-exceed / buffer) * penalty, 0);
}
