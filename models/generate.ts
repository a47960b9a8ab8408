/**
 * Batched generation with the native engine: every prompt in one KV-cached batch, sampled with
 * temperature / top-k / top-p from a seeded stream per prompt, ending at the checkpoint's
 * end-of-turn tokens, extra stop tokens, stop strings or the token budget. Runs off the main
 * thread; one generation at a time per model (concurrent calls are batched together). LoRA
 * adapters of the model share its queue (withAdapter): a batch decodes with one adapter or none.
 */
import type { PolicyAdapter } from "./adapter.js";
import type { TokenAutomaton } from "./grammar/index.js";
import { BatchQueue } from "./batch-queue.js";
import type { PolicyModel } from "./model.js";
import { loadNative, nativeConstraint } from "./native.js";
import { cutAtStopString, SamplingSchema, type Completer, type Completion, type SamplingInput } from "./sampling.js";
import type { PolicyTokenizer } from "./tokenizer.js";

// Decoding steps between stop-string checks (the text is only known after decoding).
const STOP_CHECK_STEPS = 8;

// The field of a queued call's sampling settings that names its adapter: the queue batches calls
// whose settings agree, so calls for different adapters never share a batch.
const ADAPTER = "loraAdapter";

export class NativeCompleter implements Completer {
  private readonly queue = new BatchQueue((p, s, seeds, constraints) => this.run(p, s, seeds, constraints));
  private readonly adapters = new Map<string, PolicyAdapter>();

  constructor(
    readonly id: string,
    readonly model: PolicyModel,
    readonly tokenizer: PolicyTokenizer,
  ) {}

  /** Completes with whatever the model runs with (its adapter in use, or the base alone). */
  complete(prompts: readonly (string | readonly number[])[], sampling: SamplingInput, seeds?: readonly number[], constraints?: readonly (TokenAutomaton | undefined)[]): Promise<Completion[]> {
    return this.queue.submit(prompts, sampling, seeds, constraints);
  }

  /** A completer of the same model and queue that decodes with `adapter` (one of this model's), known as `name`. */
  withAdapter(name: string, adapter: PolicyAdapter): Completer {
    if (adapter.model !== this.model.native) throw new Error("the LoRA adapter was made for another model");
    this.adapters.set(name, adapter);
    return {
      id: `${this.id}:${name}`,
      complete: (prompts, sampling, seeds, constraints) => this.queue.submit(prompts, { ...sampling, [ADAPTER]: name } as SamplingInput, seeds, constraints),
    };
  }

  private async run(prompts: readonly (string | readonly number[])[], input: SamplingInput, seeds?: readonly number[], constraints?: readonly (TokenAutomaton | undefined)[]): Promise<Completion[]> {
    const name = (input as Record<string, unknown>)[ADAPTER] as string | undefined;
    const adapter = name === undefined ? undefined : this.adapters.get(name)!;
    const s = SamplingSchema.parse(input);
    if (prompts.length === 0) return [];
    const ids = prompts.map((p) => Int32Array.from(typeof p === "string" ? this.tokenizer.encode(p) : p));
    const stopTokenIds = [...new Set([...this.tokenizer.stopTokenIds, ...s.stopTokenIds])];
    const { Generation } = loadNative();
    const gen = new Generation(this.model.native, ids, {
      maxNewTokens: s.maxNewTokens,
      temperature: s.temperature,
      topK: s.topK,
      topP: s.topP,
      seeds: seeds ?? ids.map((_, i) => s.seed + i),
      ...(adapter ? { adapter: adapter.native } : {}),
      stopTokenIds,
      ...(constraints ? { constraints: constraints.map((c) => (c ? nativeConstraint(c) : null)) } : {}),
      ...(s.softThinking ? { softThinking: s.softThinking } : {}),
    });
    const decode = (t: readonly number[]) => this.tokenizer.decode(t);
    const chunk = s.stop.length > 0 ? STOP_CHECK_STEPS : s.maxNewTokens;
    let running = gen.size;
    while (running > 0) {
      running = await gen.stepAsync(chunk);
      if (s.stop.length === 0) continue;
      for (let i = 0; i < gen.size; i++) {
        const r = gen.result(i);
        if (r.finishReason === null && cutAtStopString(Array.from(r.tokens), decode, s.stop)) gen.stop(i);
      }
      running = gen.running;
    }
    return ids.map((prompt, i): Completion => {
      const r = gen.result(i);
      let tokens = Array.from(r.tokens);
      let logprobs = Array.from(r.logprobs);
      const thinking = r.soft ? { thinking: decode(Array.from(r.soft.argmax)) } : {};
      const cut = cutAtStopString(tokens, decode, s.stop);
      if (cut) {
        tokens = tokens.slice(0, cut.keep);
        logprobs = logprobs.slice(0, cut.keep);
        return { text: cut.text, tokens, logprobs, finishReason: "stop_string" as const, promptTokens: prompt.length, ...thinking };
      }
      const stopped = r.finishReason === "stop_token";
      const text = decode(stopped ? tokens.slice(0, -1) : tokens);
      return { text, tokens, logprobs, finishReason: stopped ? ("stop_token" as const) : ("length" as const), promptTokens: prompt.length, ...thinking };
    });
  }
}
