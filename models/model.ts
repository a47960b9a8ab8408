/**
 * A policy model: a Qwen2 architecture (its Hugging Face config) over the native engine. Offers
 * the passes a trainer needs (teacher-forced log-probs, the per-token-weighted backward, AdamW)
 * and the logits a parity check needs; generation lives in generate.ts.
 */
import { engineConfig, type Qwen2Config } from "./config.js";
import { loadNative, resolveDevice, type AdamWOptions, type Device, type Dtype, type EngineConfig, type FloatArray, type MatmulPrecision, type ModelOptions, type NativeModel, type PassResult, type PolicyPassOptions, type TensorInfo } from "./native.js";

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

/** Where models go when their maker does not say (a command's --device and --precision). */
let defaults: ModelOptions = {};

/**
 * Sets the device (and, on a GPU, the matrix-product precision: default bf16) of the models
 * made from now on without one, as --threads sets the CPU's threads. Returns the device ("auto"
 * resolved); "cuda" fails with the reason where it cannot run.
 */
export function setModelDevice(choice: Device | "auto", precision?: MatmulPrecision): Device {
  const device = resolveDevice(choice);
  if (device === "cpu" && precision !== undefined && precision !== "fp32")
    throw new Error(`precision ${precision} is for the cuda device (the policy runs on the cpu, in fp32)`);
  defaults = device === "cuda" ? { device, precision: precision ?? "bf16" } : {};
  return device;
}

/** The device and precision setModelDevice chose (a worker thread making models takes them along). */
export function modelDefaults(): ModelOptions {
  return defaults;
}

export class PolicyModel {
  readonly engine: EngineConfig;
  readonly native: NativeModel;

  constructor(
    readonly config: Qwen2Config,
    opts: ModelOptions = {},
  ) {
    this.engine = engineConfig(config);
    const { Model } = loadNative();
    this.native = new Model(this.engine, { ...defaults, ...opts, dtype: opts.dtype ?? "float32" });
  }

  get dtype(): Dtype {
    return this.native.dtype;
  }

  get device(): Device {
    return this.native.device;
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

  /** The parameters, as a view over the engine's memory (CPU models; see readParams). */
  params(): FloatArray {
    return this.native.params();
  }

  /**
   * The parameters on the host, to read: on the CPU a view over the engine's memory (no copy:
   * do not keep it across updates), on a GPU a copy.
   */
  readParams(): FloatArray {
    return this.device === "cpu" ? this.native.params() : this.native.readParams();
  }

  /**
   * Changes the parameters through a host array: on the CPU the engine's own memory, on a GPU a
   * copy that is written back after `edit`. With `overwrite`, edit sets every value, so a GPU
   * copy starts as zeros instead of the current values.
   */
  updateParams(edit: (params: FloatArray) => void, opts: { overwrite?: boolean } = {}): void {
    if (this.device === "cpu") return edit(this.native.params());
    const host = opts.overwrite ? (this.dtype === "float64" ? new Float64Array(this.numParams) : new Float32Array(this.numParams)) : this.native.readParams();
    edit(host);
    this.native.writeParams(host);
  }

  /** The AdamW moments on the host, to read (views on the CPU, copies on a GPU). */
  readMoments(): { m: FloatArray; v: FloatArray } {
    return this.device === "cpu" ? this.native.moments() : this.native.readMoments();
  }

  /** Changes the AdamW moments through host arrays (written back on a GPU), as updateParams. */
  updateMoments(edit: (moments: { m: FloatArray; v: FloatArray }) => void): void {
    if (this.device === "cpu") return edit(this.native.moments());
    const host = this.native.readMoments();
    edit(host);
    this.native.writeMoments(host.m, host.v);
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
