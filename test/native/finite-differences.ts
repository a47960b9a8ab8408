/**
 * Central finite differences of a loss in chosen parameters, against a backward pass's gradient:
 * the check every gradient test runs (the native engine's layers, the policy head, the GRPO
 * objective). Each parameter is restored after its two evaluations.
 */
export interface DifferenceCheck {
  /** max |(loss(x + h) - loss(x - h)) / 2h - grad| over the indices. */
  readonly maxErr: number;
  /** max |grad| over the indices (a vanished gradient would pass trivially). */
  readonly maxGrad: number;
}

export async function centralDifferences(
  params: { [i: number]: number },
  indices: Iterable<number>,
  grads: ArrayLike<number>,
  loss: () => number | Promise<number>,
  h = 1e-6,
): Promise<DifferenceCheck> {
  let maxErr = 0;
  let maxGrad = 0;
  for (const i of indices) {
    const x = params[i]!;
    params[i] = x + h;
    const up = await loss();
    params[i] = x - h;
    const down = await loss();
    params[i] = x;
    maxErr = Math.max(maxErr, Math.abs((up - down) / (2 * h) - grads[i]!));
    maxGrad = Math.max(maxGrad, Math.abs(grads[i]!));
  }
  return { maxErr, maxGrad };
}
