/**
 * Turns concurrent completion requests into batches: requests that arrive while a batch runs
 * wait, then the waiting ones with the same sampling settings run together as one batch. With a
 * benchmark's concurrency N, the model decodes N prompts at once instead of one after another.
 *
 * A batch is started on the macrotask after the request that found the queue idle (and after the
 * batch before it ends), not at once: requests made together (a benchmark's N turns, each a few
 * awaits deep) have all arrived by then, and the first of them is batched with the others instead
 * of decoding alone while they wait. Settings take turns: what is left of one settings' calls
 * after a batch waits behind the other settings' calls.
 */
import type { TokenAutomaton } from "./grammar/index.js";
import type { Completion, SamplingInput } from "./sampling.js";

type Constraints = readonly (TokenAutomaton | undefined)[];

/** One submit call: its prompts stay together in one batch. */
interface Call {
  readonly prompts: readonly (string | readonly number[])[];
  readonly seeds: readonly number[];
  readonly constraints: Constraints | undefined;
  readonly resolve: (c: Completion[]) => void;
  readonly reject: (e: unknown) => void;
}

export type BatchRunner = (prompts: (string | readonly number[])[], sampling: SamplingInput, seeds: number[] | undefined, constraints: Constraints | undefined) => Promise<Completion[]>;

export class BatchQueue {
  private readonly waiting = new Map<string, { sampling: SamplingInput; calls: Call[] }>();
  private running = false;
  private scheduled = false;

  /** `maxBatch` bounds the prompts of calls batched together; one call larger than it runs whole, alone. */
  constructor(
    private readonly run: BatchRunner,
    private readonly maxBatch = 64,
  ) {}

  /** Completes the prompts in one batch, with other calls' of the same sampling settings (their own seeds or sampling.seed + i). */
  submit(prompts: readonly (string | readonly number[])[], sampling: SamplingInput, seeds?: readonly number[], constraints?: Constraints): Promise<Completion[]> {
    if (seeds !== undefined && seeds.length !== prompts.length) return Promise.reject(new Error("one seed per prompt is needed"));
    if (constraints !== undefined && constraints.length !== prompts.length) return Promise.reject(new Error("one constraint (or none) per prompt is needed"));
    const base = (sampling.seed ?? 0) as number;
    const key = JSON.stringify({ ...sampling, seed: undefined });
    return new Promise<Completion[]>((resolve, reject) => {
      let group = this.waiting.get(key);
      if (!group) this.waiting.set(key, (group = { sampling, calls: [] }));
      group.calls.push({ prompts: [...prompts], seeds: seeds ? [...seeds] : prompts.map((_, i) => base + i), constraints, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.running || this.scheduled || this.waiting.size === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    const next = this.waiting.entries().next();
    if (next.done) return;
    const [key, group] = next.value;
    let size = 0;
    let taken = 0;
    for (const call of group.calls) {
      if (taken > 0 && size + call.prompts.length > this.maxBatch) break;
      size += call.prompts.length;
      taken++;
    }
    const batch = group.calls.splice(0, taken);
    // What is left of the group waits behind the other settings' calls, so that none waits for ever.
    this.waiting.delete(key);
    if (group.calls.length > 0) this.waiting.set(key, group);
    this.running = true;
    try {
      const out = await this.run(
        batch.flatMap((c) => c.prompts),
        group.sampling,
        batch.flatMap((c) => c.seeds),
        batch.some((c) => c.constraints?.some((x) => x)) ? batch.flatMap((c) => c.constraints ?? c.prompts.map(() => undefined)) : undefined,
      );
      let at = 0;
      for (const c of batch) {
        c.resolve(out.slice(at, at + c.prompts.length));
        at += c.prompts.length;
      }
    } catch (err) {
      for (const c of batch) c.reject(err);
    } finally {
      this.running = false;
      this.schedule();
    }
  }
}
