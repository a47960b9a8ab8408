/**
 * KL to the reference policy per token, from the log-probs of the sampled token under the
 * policy (logp) and the reference (refLogp), with Schulman's estimators of KL(pi || pi_ref):
 *   k1 = logp - refLogp                       (unbiased, high variance)
 *   k2 = (logp - refLogp)^2 / 2               (low variance, biased)
 *   k3 = exp(refLogp - logp) - (refLogp - logp) - 1   (unbiased, low variance, always >= 0)
 * k3 is clamped to [-10, 10] as verl's low_var_kl is. Each comes with its derivative in logp,
 * which is what the trainer hands the engine as the token's weight.
 */
import type { KlEstimator } from "./config.js";

const K3_CLAMP = 10;

export function klValue(est: KlEstimator, logp: number, refLogp: number): number {
  const d = logp - refLogp;
  switch (est) {
    case "k1":
      return d;
    case "k2":
      return 0.5 * d * d;
    case "k3":
      return Math.min(K3_CLAMP, Math.max(-K3_CLAMP, Math.exp(-d) - 1 + d));
  }
}

/** d klValue / d logp. */
export function klGrad(est: KlEstimator, logp: number, refLogp: number): number {
  const d = logp - refLogp;
  switch (est) {
    case "k1":
      return 1;
    case "k2":
      return d;
    case "k3": {
      const v = Math.exp(-d) - 1 + d;
      return v > K3_CLAMP || v < -K3_CLAMP ? 0 : 1 - Math.exp(-d);
    }
  }
}
