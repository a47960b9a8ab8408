/** Learning rate: linear warmup from 0, then cosine decay to minLr at the last step. */
export interface Schedule {
  readonly lr: number;
  readonly minLr: number;
  readonly warmupSteps: number;
  readonly totalSteps: number;
}

/** The rate for 0-based optimizer step `step`. */
export function learningRate(s: Schedule, step: number): number {
  if (s.warmupSteps > 0 && step < s.warmupSteps) return (s.lr * (step + 1)) / s.warmupSteps;
  const decaySteps = Math.max(1, s.totalSteps - s.warmupSteps);
  const t = Math.min(1, (step - s.warmupSteps) / decaySteps);
  return s.minLr + 0.5 * (s.lr - s.minLr) * (1 + Math.cos(Math.PI * t));
}
