/**
 * Turns concurrent completion requests into batches: requests that arrive while a batch runs
 * wait, then the waiting ones with the same sampling settings run together as one batch. With a
 * benchmark's concurrency N, the model decodes N prompts at once instead of one after another.
 */
import type { TokenAutomaton } from "./grammar/index.js";
import type { Completion, SamplingInput } from "./sampling.js";

type Constraints = readonly (TokenAutomaton | undefined)[];

interface Request {
  readonly prompt: string | readonly number[];
  readonly seed: number | undefined;
  readonly constraint: TokenAutomaton | undefined;
  readonly resolve: (c: Completion) => void;
  readonly reject: (e: unknown) => void;
}

export type BatchRunner = (prompts: (string | readonly number[])[], sampling: SamplingInput, seeds: number[] | undefined, constraints: Constraints | undefined) => Promise<Completion[]>;

export class BatchQueue {
  private readonly waiting = new Map<string, { sampling: SamplingInput; requests: Request[] }>();
  private running = false;

  constructor(
    private readonly run: BatchRunner,
    private readonly maxBatch = 64,
  ) {}

  /** Completes the prompts as one batch (after any batch already running). */
  submit(prompts: readonly (string | readonly number[])[], sampling: SamplingInput, seeds?: readonly number[], constraints?: Constraints): Promise<Completion[]> {
    if (seeds !== undefined && seeds.length !== prompts.length) return Promise.reject(new Error("one seed per prompt is needed"));
    if (constraints !== undefined && constraints.length !== prompts.length) return Promise.reject(new Error("one constraint (or none) per prompt is needed"));
    if (!this.running && this.waiting.size === 0) {
      // Nothing queued: run this call as it is (its own seeds or sampling.seed + i).
      return this.exclusive(() => this.run([...prompts], sampling, seeds ? [...seeds] : undefined, constraints));
    }
    const base = (sampling.seed ?? 0) as number;
    return Promise.all(
      prompts.map(
        (prompt, i) =>
          new Promise<Completion>((resolve, reject) => {
            const key = JSON.stringify({ ...sampling, seed: undefined });
            let group = this.waiting.get(key);
            if (!group) this.waiting.set(key, (group = { sampling, requests: [] }));
            group.requests.push({ prompt, seed: seeds ? seeds[i]! : base + i, constraint: constraints?.[i], resolve, reject });
          }),
      ),
    );
  }

  private async exclusive<T>(f: () => Promise<T>): Promise<T> {
    this.running = true;
    try {
      return await f();
    } finally {
      this.running = false;
      void this.drain();
    }
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    const next = this.waiting.entries().next();
    if (next.done) return;
    const [key, group] = next.value;
    const batch = group.requests.splice(0, this.maxBatch);
    if (group.requests.length === 0) this.waiting.delete(key);
    await this.exclusive(async () => {
      try {
        const out = await this.run(
          batch.map((r) => r.prompt),
          group.sampling,
          batch.map((r) => r.seed!),
          batch.some((r) => r.constraint) ? batch.map((r) => r.constraint) : undefined,
        );
        batch.forEach((r, i) => r.resolve(out[i]!));
      } catch (err) {
        batch.forEach((r) => r.reject(err));
      }
    });
  }
}
