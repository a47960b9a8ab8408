/**
 * The batch queue against a fake runner that records every batch it is given: requests made
 * together, the first included, run as one batch; later ones wait for the running batch and then
 * run together; settings, seeds, constraints, sizes and errors are kept per call.
 */
import { describe, expect, it } from "vitest";
import { BatchQueue } from "../../models/batch-queue.js";
import type { TokenAutomaton } from "../../models/grammar/index.js";
import type { Completion, SamplingInput } from "../../models/sampling.js";

interface Seen {
  readonly prompts: string[];
  readonly temperature: number | undefined;
  readonly seeds: number[] | undefined;
  readonly constrained: boolean[] | undefined;
}

/** A runner whose completion of prompt p with seed s is the text `p#s`; each batch waits for `gate` when one is set. */
function recorder(fail?: string) {
  const batches: Seen[] = [];
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const queue = new BatchQueue(
    async (prompts, sampling, seeds, constraints) => {
      batches.push({ prompts: prompts.map(String), temperature: sampling.temperature, seeds, constrained: constraints?.map((c) => c !== undefined) });
      if (gate) await gate;
      if (fail && prompts.includes(fail)) throw new Error(`cannot complete ${fail}`);
      return prompts.map((p, i) => ({ text: `${String(p)}#${seeds?.[i]}` }) as Completion);
    },
    4,
  );
  const hold = () => {
    gate = new Promise((done) => (open = done));
  };
  const release = () => {
    gate = undefined;
    open?.();
  };
  return { queue, batches, hold, release };
}

const texts = (cs: Completion[]) => cs.map((c) => c.text);
const s: SamplingInput = { maxNewTokens: 4, temperature: 0.5 };

describe("BatchQueue", () => {
  it("batches requests made together, the first one included, each call given its own completions", async () => {
    const { queue, batches } = recorder();
    const replies = await Promise.all([queue.submit(["a"], s, [7]), queue.submit(["b", "c"], s), queue.submit(["d"], { ...s, seed: 10 })]);
    expect(batches).toEqual([{ prompts: ["a", "b", "c", "d"], temperature: 0.5, seeds: [7, 0, 1, 10], constrained: undefined }]);
    expect(replies.map(texts)).toEqual([["a#7"], ["b#0", "c#1"], ["d#10"]]);
  });

  it("batches requests a few awaits apart, as a benchmark's concurrent turns make them", async () => {
    const { queue, batches } = recorder();
    const turn = async (p: string, depth: number) => {
      for (let i = 0; i < depth; i++) await Promise.resolve();
      return queue.submit([p], s, [depth]);
    };
    await Promise.all([turn("a", 0), turn("b", 3), turn("c", 8)]);
    expect(batches.map((b) => b.prompts)).toEqual([["a", "b", "c"]]);
  });

  it("runs what arrives while a batch runs after it, together; other settings apart; at most maxBatch prompts of several calls", async () => {
    const { queue, batches, hold, release } = recorder();
    hold();
    const first = queue.submit(["a"], s, [1]);
    await new Promise((done) => setImmediate(done));
    expect(batches).toHaveLength(1);
    const later = [queue.submit(["b"], s, [2]), queue.submit(["c"], { ...s, temperature: 0 }, [3]), queue.submit(["d", "e", "f"], s, [4, 5, 6]), queue.submit(["g"], s, [7])];
    release();
    expect(texts(await first)).toEqual(["a#1"]);
    expect((await Promise.all(later)).map(texts)).toEqual([["b#2"], ["c#3"], ["d#4", "e#5", "f#6"], ["g#7"]]);
    expect(batches.map((b) => [b.temperature, b.prompts])).toEqual([
      [0.5, ["a"]],
      [0.5, ["b", "d", "e", "f"]],
      [0, ["c"]],
      [0.5, ["g"]],
    ]);
  });

  it("runs one call larger than maxBatch whole; passes constraints only where a call has one, by prompt", async () => {
    const { queue, batches } = recorder();
    const big = ["a", "b", "c", "d", "e", "f"];
    const c = {} as TokenAutomaton;
    const replies = await Promise.all([queue.submit(big, s), queue.submit(["x"], s, [9], [c])]);
    expect(batches.map((b) => b.prompts)).toEqual([big, ["x"]]);
    expect(replies.map((r) => r.length)).toEqual([6, 1]);
    await Promise.all([queue.submit(["p"], s, [1], [c]), queue.submit(["q"], s, [2])]);
    expect(batches.at(-1)!.constrained).toEqual([true, false]);
  });

  it("rejects every call of a failed batch, and goes on with the next", async () => {
    const { queue, batches } = recorder("bad");
    const failed = [queue.submit(["ok"], s), queue.submit(["bad"], s)];
    await Promise.all(failed.map((p) => expect(p).rejects.toThrow("cannot complete bad")));
    expect(texts(await queue.submit(["next"], s, [3]))).toEqual(["next#3"]);
    expect(batches.map((b) => b.prompts)).toEqual([["ok", "bad"], ["next"]]);
    await expect(queue.submit(["a", "b"], s, [1])).rejects.toThrow("one seed per prompt");
  });
});
