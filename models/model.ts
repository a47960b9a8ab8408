/**
 * A policy model: a Qwen2 architecture (its Hugging Face config) over the native engine. Offers
 * the passes a trainer needs (teacher-forced log-probs, the per-token-weighted backward, AdamW)
 * and the logits a parity check needs; generation lives in generate.ts.
 */
import { engineConfig, type Qwen2Config } from "./config.js";
import { PolicyAdapter } from "./adapter.js";
import type { LoraSettings } from "./lora-settings.js";
import { loadNative, resolveDevice, type AdapterPassOptions, type Device, type Dtype, type EngineConfig, type FloatArray, type MatmulPrecision, type ModelOptions, type NativeModel, type PassResult, type PolicyPassOptions, type TensorInfo } from "./native.js";
import { ParamSet } from "./param-set.js";

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

/** Whether the models made from now on recompute activations in training passes (a trainer's --activation-checkpointing). */
let checkpointing = false;

/**
 * Activation checkpointing for the models made from now on (NativeModel.activationCheckpointing):
 * training passes keep each layer's input only and recompute the layer before its backward pass,
 * for sequences whose activations would not fit. The same results, to the bit.
 */
export function setActivationCheckpointing(on: boolean): void {
  checkpointing = on;
}

/** The device and precision setModelDevice chose (a worker thread making models takes them along). */
export function modelDefaults(): ModelOptions {
  return defaults;
}

export class PolicyModel {
  readonly engine: EngineConfig;
  readonly native: NativeModel;

  /** The base model's parameters. */
  readonly weights: ParamSet;
  private active: PolicyAdapter | undefined;

  constructor(
    readonly config: Qwen2Config,
    opts: ModelOptions = {},
  ) {
    this.engine = engineConfig(config);
    const { Model } = loadNative();
    this.native = new Model(this.engine, { ...defaults, ...opts, dtype: opts.dtype ?? "float32" });
    if (checkpointing) this.native.activationCheckpointing = true;
    this.weights = new ParamSet(this.native, this.native.device, this.native.dtype);
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

  /** The base model's parameters on the host, to read (ParamSet.readParams). */
  readParams(): FloatArray {
    return this.weights.readParams();
  }

  /** Changes the base model's parameters through a host array (ParamSet.updateParams). */
  updateParams(edit: (params: FloatArray) => void, opts: { overwrite?: boolean } = {}): void {
    this.weights.updateParams(edit, opts);
  }

  /** The base model's AdamW moments on the host, to read (ParamSet.readMoments). */
  readMoments(): { m: FloatArray; v: FloatArray } {
    return this.weights.readMoments();
  }

  /** Changes the base model's AdamW moments through host arrays (ParamSet.updateMoments). */
  updateMoments(edit: (moments: { m: FloatArray; v: FloatArray }) => void): void {
    this.weights.updateMoments(edit);
  }

  /**
   * A new LoRA adapter of this model (PEFT's initialisation, seeded), not yet in use; `base` is
   * this model's folder, as the adapter's config will name it.
   */
  newAdapter(settings: LoraSettings, seed: number | string, base: string | null = null): PolicyAdapter {
    return new PolicyAdapter(this.native, settings, base).initialise(seed);
  }

  /** The LoRA adapter the passes and generation run with (undefined: the base model alone). */
  get adapter(): PolicyAdapter | undefined {
    return this.active;
  }

  /**
   * Runs the passes and generation with `adapter` from now on (undefined: the base model). With
   * one in use, training updates the adapter alone: see `trained`.
   */
  useAdapter(adapter: PolicyAdapter | undefined): void {
    if (adapter && adapter.model !== this.native) throw new Error("the LoRA adapter was made for another model");
    this.native.setAdapter(adapter ? adapter.native : null);
    this.active = adapter;
  }

  /**
   * What training updates: the adapter's tensors when one is in use (the base model is frozen:
   * it gets no gradients and no AdamW moments), else the model's parameters.
   */
  get trained(): ParamSet {
    return this.active ? this.active.weights : this.weights;
  }

  /** Runs `f` on the base model alone (the adapter set aside meanwhile): a LoRA run's reference policy. */
  async withoutAdapter<T>(f: () => Promise<T>): Promise<T> {
    const adapter = this.active;
    if (!adapter) return f();
    this.useAdapter(undefined);
    try {
      return await f();
    } finally {
      this.useAdapter(adapter);
    }
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

  /**
   * Forward (and with backward, gradient accumulation into `trained`); runs off the main thread.
   * opts.dropoutSeed makes it a training pass of the adapter (its dropout draws from the seed).
   */
  pass(batch: TokenBatch, backward: boolean, opts: AdapterPassOptions = {}): Promise<PassResult> {
    return this.native.forwardBackwardAsync(batch.tokens, batch.targets, batch.weights, batch.batch, batch.seqLen, backward, opts);
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
}
