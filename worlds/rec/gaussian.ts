/** A standard normal draw (Box-Muller) from a seeded stream. */
import type { Rng } from "../core/rng.js";

export function gaussian(rng: Rng): number {
  const u = 1 - rng.next(); // in (0, 1]: log(u) is finite
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}
