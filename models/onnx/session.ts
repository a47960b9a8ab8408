/**
 * Runs a transformers.js / Optimum decoder folder (DIR/onnx/model.onnx with KV-cache inputs and
 * outputs, config.json, tokenizer files) with onnxruntime-node on the CPU: ours, or a real
 * Optimum export. Batched generation with left padding; sampling as the native engine samples.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type * as Ort from "onnxruntime-node";
import { DataError } from "../../worlds/core/errors.js";
import { Rng } from "../../worlds/core/rng.js";
import type { TokenAutomaton } from "../grammar/index.js";
import { BatchQueue } from "../batch-queue.js";
import { engineConfig, readConfig } from "../config.js";
import type { EngineConfig } from "../native.js";
import { sampleAmong, sampleToken } from "../sampler.js";
import { cutAtStopString, SamplingSchema, type Completer, type Completion, type SamplingInput } from "../sampling.js";
import { PolicyTokenizer } from "../tokenizer.js";

// onnxruntime-node loads its native library when imported: only do that when an ONNX model is used.
let ortModule: typeof Ort | undefined;
async function onnxruntime(): Promise<typeof Ort> {
  return (ortModule ??= await import("onnxruntime-node"));
}

export interface OnnxOptions {
  /** Intra-op threads (default: onnxruntime's choice, one per core). */
  readonly threads?: number;
  /** The file under DIR (default onnx/model.onnx). */
  readonly file?: string;
}

export class OnnxCompleter implements Completer {
  private readonly queue = new BatchQueue((p, s, seeds, constraints) => this.run(p, s, seeds, constraints));

  private constructor(
    readonly id: string,
    private readonly ort: typeof Ort,
    readonly session: Ort.InferenceSession,
    readonly tokenizer: PolicyTokenizer,
    readonly engine: EngineConfig,
  ) {}

  static async load(dir: string, opts: OnnxOptions = {}): Promise<OnnxCompleter> {
    const file = join(dir, opts.file ?? join("onnx", "model.onnx"));
    if (!existsSync(file)) throw new DataError(file, {}, "missing: export the checkpoint first (`socialworld model export-onnx DIR`)");
    const engine = engineConfig(readConfig(join(dir, "config.json")));
    const tokenizer = PolicyTokenizer.load(dir);
    const ort = await onnxruntime();
    let session: Ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(file, {
        executionProviders: ["cpu"],
        graphOptimizationLevel: "all",
        ...(opts.threads ? { intraOpNumThreads: opts.threads, interOpNumThreads: 1 } : {}),
      });
    } catch (err) {
      throw new DataError(file, {}, `onnxruntime cannot load it: ${(err as Error).message.split("\n")[0]}`);
    }
    for (const name of ["input_ids", "attention_mask", "past_key_values.0.key"])
      if (!session.inputNames.includes(name)) throw new DataError(file, { field: name }, "not a decoder with a KV cache in the transformers.js layout (input missing)");
    return new OnnxCompleter(`onnx:${dir}`, ort, session, tokenizer, engine);
  }

  complete(prompts: readonly (string | readonly number[])[], sampling: SamplingInput, seeds?: readonly number[], constraints?: readonly (TokenAutomaton | undefined)[]): Promise<Completion[]> {
    return this.queue.submit(prompts, sampling, seeds, constraints);
  }

  /** One forward pass: logits [batch, seq, vocab] and the new cache. */
  async forward(ids: BigInt64Array, mask: BigInt64Array, positions: BigInt64Array, batch: number, seq: number, past: Ort.Tensor[]): Promise<{ logits: Ort.Tensor; present: Ort.Tensor[] }> {
    const feeds: Record<string, Ort.Tensor> = {
      input_ids: new this.ort.Tensor("int64", ids, [batch, seq]),
      attention_mask: new this.ort.Tensor("int64", mask, [batch, mask.length / batch]),
    };
    if (this.session.inputNames.includes("position_ids")) feeds.position_ids = new this.ort.Tensor("int64", positions, [batch, seq]);
    for (let l = 0; l < this.engine.numLayers; l++) {
      feeds[`past_key_values.${l}.key`] = past[2 * l]!;
      feeds[`past_key_values.${l}.value`] = past[2 * l + 1]!;
    }
    const out = await this.session.run(feeds);
    const present: Ort.Tensor[] = [];
    for (let l = 0; l < this.engine.numLayers; l++) present.push(out[`present.${l}.key`]!, out[`present.${l}.value`]!);
    return { logits: out.logits!, present };
  }

  emptyCache(batch: number): Ort.Tensor[] {
    const dims = [batch, this.engine.numKvHeads, 0, this.engine.headDim];
    return Array.from({ length: 2 * this.engine.numLayers }, () => new this.ort.Tensor("float32", new Float32Array(0), dims));
  }

  private async run(prompts: (string | readonly number[])[], input: SamplingInput, seeds: number[] | undefined, constraints: readonly (TokenAutomaton | undefined)[] | undefined): Promise<Completion[]> {
    const s = SamplingSchema.parse(input);
    if (s.softThinking) throw new Error("soft thinking runs on the native engine (a policy:DIR agent), not on onnxruntime");
    const B = prompts.length;
    if (B === 0) return [];
    const ids = prompts.map((p) => (typeof p === "string" ? this.tokenizer.encode(p) : [...p]));
    if (ids.some((p) => p.length === 0)) throw new Error("cannot complete an empty prompt");
    const V = this.engine.vocabSize;
    const stopIds = new Set([...this.tokenizer.stopTokenIds, ...s.stopTokenIds]);
    const rngs = ids.map((_, i) => Rng.seeded(`onnx-sample:${seeds ? seeds[i] : s.seed + i}`));
    const P = Math.max(...ids.map((p) => p.length));
    // As the native engine says it (its KV cache is sized so; the last new token is never fed
    // back): past the table of positions the graph would fail in a Gather, with a message that
    // names neither the prompt nor the model.
    const length = P + s.maxNewTokens - 1;
    if (length > this.engine.maxPositionEmbeddings) {
      throw new Error(`length ${length} (a prompt of ${P} tokens and up to ${s.maxNewTokens} new) exceeds max_position_embeddings ${this.engine.maxPositionEmbeddings}`);
    }
    // Left padding: every prompt's last token is in the last column.
    let mask: bigint[] = [];
    const tokens = new BigInt64Array(B * P);
    const positions = new BigInt64Array(B * P);
    for (let b = 0; b < B; b++) {
      const pad = P - ids[b]!.length;
      for (let t = 0; t < P; t++) {
        const real = t >= pad;
        tokens[b * P + t] = BigInt(real ? ids[b]![t - pad]! : 0);
        positions[b * P + t] = BigInt(real ? t - pad : 1);
        mask.push(real ? 1n : 0n);
      }
    }
    // A grammar per sequence: its state, masked as the native engine masks (native/src/sampler.cpp).
    const grammars = ids.map((_, b) => {
      const automaton = constraints?.[b];
      if (!automaton) return undefined;
      if (automaton.vocabSize > V) throw new Error(`constraint ${b} was compiled for ${automaton.vocabSize} tokens, more than the model's ${V}`);
      if (automaton.minBudget > s.maxNewTokens) throw new Error(`constraint ${b} needs up to ${automaton.minBudget} tokens to finish, more than its budget of ${s.maxNewTokens}`);
      return { automaton, state: automaton.start, tokens: new Int32Array(V + stopIds.size), next: new Int32Array(V + stopIds.size) };
    });
    const next = new Array<number>(B).fill(0);
    const out = ids.map(() => ({ tokens: [] as number[], logprobs: [] as number[], done: false, reason: "length" as "length" | "stop_token" }));
    const lastPos = ids.map((p) => p.length - 1);
    let step = await this.forward(tokens, BigInt64Array.from(mask), positions, B, P, this.emptyCache(B));
    let seqLen = P;
    const decode = (t: readonly number[]) => this.tokenizer.decode(t);
    for (let n = 0; n < s.maxNewTokens; n++) {
      const logits = step.logits.data as Float32Array;
      for (let b = 0; b < B; b++) {
        const o = out[b]!;
        if (o.done) continue;
        const row = logits.subarray((b * seqLen + seqLen - 1) * V, (b * seqLen + seqLen) * V);
        const g = grammars[b];
        let token: number;
        let logprob: number;
        if (g) {
          const n = g.automaton.allowed(g.state, s.maxNewTokens - o.tokens.length, g.tokens, g.next, stopIds);
          const pick = sampleAmong(row, Array.from(g.tokens.subarray(0, n)), s, rngs[b]!);
          token = g.tokens[pick.index]!;
          logprob = pick.logprob;
          g.state = g.next[pick.index]!;
        } else ({ token, logprob } = sampleToken(row, s, rngs[b]!));
        o.tokens.push(token);
        o.logprobs.push(logprob);
        next[b] = token;
        if (stopIds.has(token)) {
          o.done = true;
          o.reason = "stop_token";
        } else if (s.stop.length > 0 && cutAtStopString(o.tokens, decode, s.stop)) o.done = true;
      }
      if (out.every((o) => o.done) || n + 1 === s.maxNewTokens) break;
      mask = mask.length ? rebuildMask(mask, B) : mask;
      const ids1 = BigInt64Array.from(next.map((t) => BigInt(t)));
      const pos1 = BigInt64Array.from(lastPos.map((p, b) => BigInt((lastPos[b] = p + 1))));
      step = await this.forward(ids1, BigInt64Array.from(mask), pos1, B, 1, step.present);
      seqLen = 1;
    }
    return out.map((o, b) => {
      const cut = cutAtStopString(o.tokens, decode, s.stop);
      if (cut) return { text: cut.text, tokens: o.tokens.slice(0, cut.keep), logprobs: o.logprobs.slice(0, cut.keep), finishReason: "stop_string" as const, promptTokens: ids[b]!.length };
      const stopped = o.reason === "stop_token";
      return { text: decode(stopped ? o.tokens.slice(0, -1) : o.tokens), tokens: o.tokens, logprobs: o.logprobs, finishReason: o.reason, promptTokens: ids[b]!.length };
    });
  }
}

/** The attention mask [B, T] grown by one visible column. */
function rebuildMask(mask: bigint[], B: number): bigint[] {
  const T = mask.length / B;
  const grown: bigint[] = [];
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) grown.push(mask[b * T + t]!);
    grown.push(1n);
  }
  return grown;
}
