/**
 * The StepContext a world's transition receives: the episode's random stream, seeded on first
 * use (most transitions draw nothing, and seeding is not free), and the timestep's exogenous events.
 *
 * Why a class and not an object literal with `get rng()`: V8 keeps an accessor in the object's
 * hidden class, so every such literal gets a hidden class of its own, allocated in old space and
 * pointing at the getter's closure, whose context holds the whole episode in progress. Until the
 * next full collection that keeps every episode alive through every scavenge: a 5,994-question
 * ToMi run promoted tens of megabytes of finished episodes that way. A class's getter lives once,
 * on its prototype.
 */
import { Rng } from "./rng.js";
import type { StepContext } from "./world.js";

/** An episode's random stream, made from its seed the first time a transition asks for it. */
export class LazyRng {
  private rng: Rng | undefined = undefined;

  constructor(private readonly seed: number | string) {}

  get(): Rng {
    return (this.rng ??= Rng.seeded(this.seed));
  }
}

export class TimestepContext<X> implements StepContext<X> {
  constructor(
    private readonly source: LazyRng,
    readonly exogenous: readonly X[],
  ) {}

  get rng(): Rng {
    return this.source.get();
  }
}
