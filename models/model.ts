/**
 * A policy model: a Qwen2 architecture (its Hugging Face config) over the native engine. Offers
 * the passes a trainer needs (teacher-forced log-probs, the per-token-weighted backward, AdamW)
 * and the logits a parity check needs; generation lives in generate.ts.
 */
import { engineConfig, type Qwen2Config } from "./config.js";
import { loadNative, type AdamWOptions, type Dtype, type EngineConfig, type FloatArray, type NativeModel, type PassResult, type PolicyPassOptions, type TensorInfo } from "./native.js";

/** Rectangular token batch for a teacher-forced pass: row-major [batch, seqLen]. */
export interface TokenBatch {
  readonly tokens: Int32Array;
  /** The next token at each position, or -1 where nothing is predicted (padding, prompt). */
  readonly targets: Int32Array;
  /**
   * Per-position weight w in loss = -sum w * log p(target): 1/N on response tokens gives mean
   * cross-entropy; a policy-gradient step passes advantages here.
   */
  readonly weights: Float32Array;
  readonly batch: number;
  readonly seqLen: number;
}

export class PolicyModel {
  readonly engine: EngineConfig;
  readonly native: NativeModel;

  constructor(
    readonly config: Qwen2Config,
    opts: { dtype?: Dtype } = {},
  ) {
    this.engine = engineConfig(config);
    const { Model } = loadNative();
    this.native = new Model(this.engine, { dtype: opts.dtype ?? "float32" });
  }

  get dtype(): Dtype {
    return this.native.dtype;
  }

  get numParams(): number {
    return this.native.numParams;
  }

  get vocabSize(): number {
    return this.engine.vocabSize;
  }

  tensors(): TensorInfo[] {
    return this.native.tensors();
  }

  /** The parameters, as a view over the engine's memory. */
  params(): FloatArray {
    return this.native.params();
  }

  /** Logits at every position of one sequence: [ids.length * vocab]. */
  logits(ids: readonly number[]): FloatArray {
    if (ids.length === 0) throw new Error("logits of an empty sequence");
    return this.native.logits(Int32Array.from(ids), 1, ids.length);
  }

  /** The next-token logits after `ids`. */
  lastLogits(ids: readonly number[]): FloatArray {
    const all = this.logits(ids);
    return all.subarray((ids.length - 1) * this.vocabSize);
  }

  /** Forward (and with backward, gradient accumulation); runs off the main thread. */
  pass(batch: TokenBatch, backward: boolean): Promise<PassResult> {
    return this.native.forwardBackwardAsync(batch.tokens, batch.targets, batch.weights, batch.batch, batch.seqLen, backward);
  }

  /**
   * A pass through the policy-gradient head: log-probs (and entropies) under softmax(logits /
   * temperature), with an optional entropy term in the loss (GRPO's ratios, KL and entropy bonus).
   */
  policyPass(batch: TokenBatch, backward: boolean, opts: PolicyPassOptions): Promise<PassResult> {
    return this.native.forwardBackwardAsync(batch.tokens, batch.targets, batch.weights, batch.batch, batch.seqLen, backward, opts);
  }

  passSync(batch: TokenBatch, backward: boolean): PassResult {
    return this.native.forwardBackward(batch.tokens, batch.targets, batch.weights, batch.batch, batch.seqLen, backward);
  }

  zeroGrad(): void {
    this.native.zeroGrad();
  }

  gradNorm(): number {
    return this.native.gradNorm();
  }

  adamwStep(opts: AdamWOptions): void {
    this.native.adamwStep(opts);
  }
}
