/**
 * The native engine (native/, a C++ addon) as TypeScript sees it. Everything numerical happens
 * there; this file only loads it and states its shape. Build it with `npm run build:native`
 * (`npm install` does too).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import type { MatmulPrecisionSchema } from "./device-choice.js";
import type { TokenAutomaton, TokenAutomatonData } from "./grammar/index.js";

export type Dtype = "float32" | "float64";
export type FloatArray = Float32Array | Float64Array;
/** Where a model's memory and kernels live. */
export type Device = "cpu" | "cuda";
/**
 * How the GPU computes matrix products: fp32 (parity with the CPU), or tensor cores on tf32- or
 * bf16-rounded operands with fp32 accumulation. Everything else stays fp32 (master weights,
 * moments, gradients, activations). The CPU computes in fp32.
 */
export type MatmulPrecision = z.infer<typeof MatmulPrecisionSchema>;

export interface ModelOptions {
  readonly dtype?: Dtype;
  readonly device?: Device;
  readonly precision?: MatmulPrecision;
}

/** What the addon knows about CUDA on this machine (see cuda()). */
export interface CudaStatus {
  /** The addon was compiled with the CUDA backend. */
  readonly built: boolean;
  /** A GPU, its driver and cuBLAS were found: `device: "cuda"` works. */
  readonly available: boolean;
  /** Why not, when not available. */
  readonly reason?: string;
  readonly name?: string;
  readonly memoryBytes?: number;
  readonly computeCapability?: string;
  readonly driverVersion?: number;
  readonly runtimeVersion?: number;
  /** The cuBLAS library loaded. */
  readonly cublas?: string;
}

/** The architecture as the engine takes it (checkpoint.ts maps Hugging Face's config.json to it). */
export interface EngineConfig {
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly intermediateSize: number;
  readonly maxPositionEmbeddings: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly tieWordEmbeddings: boolean;
  readonly attentionBias: boolean;
}

/** One parameter tensor: its Hugging Face name and where it sits in the flat buffers. */
export interface TensorInfo {
  readonly name: string;
  readonly shape: readonly number[];
  readonly offset: number;
  readonly size: number;
  /** Weight decay applies (matrices and embeddings, not norms or biases). */
  readonly decay: boolean;
}

export interface PassResult<A extends FloatArray = FloatArray> {
  /** -sum over positions of weight * logprob (minus the entropy term, when one is asked for). */
  readonly loss: number;
  /** log p(target) per position (0 where the target is -1). */
  readonly logprobs: A;
  /** Entropy of softmax(logits / temperature) per position (0 where the target is -1), when asked for. */
  readonly entropy?: A;
  /** d(loss)/d(weights) of soft.inputs (one per entry), from a backward pass that asked for them (soft.inputGrads). */
  readonly inputGrads?: A;
}

/**
 * The policy-gradient head of a pass (when any of temperature, entropy, entropyWeights, masks is given):
 * log-probs (and entropies) under softmax(logits / temperature), as the sampler computes them,
 * and an entropy term in the loss, loss = -sum w * logp - sum entropyWeights * entropy.
 */
export interface PolicyPassOptions extends AdapterPassOptions {
  readonly temperature?: number;
  /** Return the entropy of every position. */
  readonly entropy?: boolean;
  readonly entropyWeights?: Float32Array;
  /** Positions whose softmax runs over some tokens only (a grammar's allowed tokens where the reply was sampled under one). */
  readonly masks?: TokenMasks;
  /** Soft tokens (SofT-GRPO): positions whose input is a mixture of embeddings, or whose output is scored by the Gumbel head. */
  readonly soft?: SoftPassOptions;
}

/**
 * Soft tokens in a pass (native/src/model.h, SoftInputs and SoftTargets). Position r's entries
 * are k in [offsets[r], offsets[r + 1]) (offsets: batch * seqLen + 1 values from 0; a position
 * with none is a plain token), ids distinct within a position.
 */
export interface SoftPassOptions {
  /** Inputs: position r's input is sum_k weights[k] * embed[ids[k]] (its token is a placeholder). */
  readonly inputs?: { readonly offsets: Int32Array; readonly ids: Int32Array; readonly weights: Float32Array };
  /**
   * Targets: position r produced a soft token q' = lp + Gumbel noise over the support ids
   * (noised[k] = q'); its log-prob is the mean Gumbel log-density of that noise, with lp the
   * log-softmax of logits / temperature renormalised on the support. Its token target must be -1.
   */
  readonly targets?: { readonly offsets: Int32Array; readonly ids: Int32Array; readonly noised: Float32Array };
  /** A backward pass also returns d(loss)/d(inputs.weights) (PassResult.inputGrads). */
  readonly inputGrads?: boolean;
}

/**
 * The policy head's masks: position r (of batch * seqLen) has candidates
 * tokens[rows[2r] .. rows[2r] + rows[2r + 1]) (increasing ids, its target among them); a length of
 * 0 keeps the whole vocabulary. Positions may share a list. Under a mask the log-prob, the entropy
 * and the gradient are those of softmax(logits / temperature) over the candidates, 0 elsewhere.
 */
export interface TokenMasks {
  readonly rows: Int32Array;
  readonly tokens: Int32Array;
}

/** How a pass runs the attached LoRA adapter. */
export interface AdapterPassOptions {
  /**
   * A training pass: the adapter's dropout draws its masks from this seed (the same seed, the
   * same masks, on every device). Without it, no dropout (evaluation).
   */
  readonly dropoutSeed?: number;
}

/** The linear layers a LoRA adapter can target, as Hugging Face's Qwen2 / Llama name them. */
export const LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;
export type LoraTargetName = (typeof LORA_TARGETS)[number];

export interface AdapterSpec {
  readonly rank: number;
  /** Multiplies B A x: alpha / rank (PEFT), alpha / sqrt(rank) (rsLoRA). */
  readonly scale: number;
  /** Input dropout of training passes, in [0, 1). */
  readonly dropout?: number;
  readonly targets: readonly string[];
}

/**
 * A LoRA adapter of one model (y = x W^T + scale * dropout(x) A^T B^T on every targeted linear
 * layer of every layer): its own flat buffers of parameters, gradients and AdamW moments, on the
 * model's device, with the tensors named as PEFT saves them
 * (base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight, A [rank, in], B [out, rank]).
 * The methods are the model's, over the adapter's buffers.
 */
export interface NativeAdapter extends NativeParams {
  readonly rank: number;
  readonly scale: number;
  readonly dropout: number;
  readonly targets: LoraTargetName[];
}

/**
 * A set of trainable tensors in one flat buffer, with gradients and AdamW moments in the same
 * layout: a model's parameters, or a LoRA adapter's.
 */
export interface NativeParams {
  readonly numParams: number;
  tensors(): TensorInfo[];
  /**
   * Views over native memory (not copies): writing them changes the model. CPU models only (a
   * CUDA model throws: use the copying methods below, which work on both devices).
   */
  params(): FloatArray;
  grads(): FloatArray;
  moments(): { m: FloatArray; v: FloatArray };
  /** Copies of [offset, offset + length) of the flat buffers (default: all). */
  readParams(offset?: number, length?: number): FloatArray;
  readGrads(offset?: number, length?: number): FloatArray;
  readMoments(): { m: FloatArray; v: FloatArray };
  /** Copies values (of the model's dtype) into the parameters from `offset` on. */
  writeParams(values: FloatArray, offset?: number): void;
  writeMoments(m: FloatArray, v: FloatArray): void;
  zeroGrad(): void;
  gradNorm(): number;
  adamwStep(options: AdamWOptions): void;
}

export interface AdamWOptions {
  readonly lr: number;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly eps?: number;
  readonly weightDecay?: number;
  /** 1-based step count (bias correction). */
  readonly step: number;
  /** Multiplies every gradient before the update (clipping). */
  readonly gradScale?: number;
}

export interface NativeModel extends NativeParams {
  readonly dtype: Dtype;
  readonly device: Device;
  readonly precision: MatmulPrecision;
  /**
   * Activation checkpointing: training passes keep each layer's input only and recompute the
   * layer before its backward pass (one more forward pass of compute; at the Qwen2.5-0.5B shape a
   * token's activations take an eighth of the memory). The same bits either way. Not while an
   * asynchronous pass is in flight.
   */
  activationCheckpointing: boolean;
  /** The bytes the last training pass's activations hold (0 before one): what checkpointing saves. */
  readonly trainingActivationBytes: number;
  /** Waits until the device has finished every kernel issued so far (timing); a no-op on the CPU. */
  synchronize(): void;
  /**
   * The LoRA adapter every pass and generation runs with from now on (null: the base model). With
   * one attached, backward passes compute the adapter's gradients only: the base is frozen.
   */
  setAdapter(adapter: NativeAdapter | null): void;
  forwardBackward(tokens: Int32Array, targets: Int32Array, weights: Float32Array | null, batch: number, seqLen: number, backward: boolean, options?: PolicyPassOptions): PassResult;
  forwardBackwardAsync(tokens: Int32Array, targets: Int32Array, weights: Float32Array | null, batch: number, seqLen: number, backward: boolean, options?: PolicyPassOptions): Promise<PassResult>;
  /** Logits at every position: [batch * seqLen * vocab]. */
  logits(tokens: Int32Array, batch: number, seqLen: number): FloatArray;
}

export interface GenerationOptions {
  readonly maxNewTokens: number;
  /** 0: greedy. */
  readonly temperature?: number;
  readonly topK?: number;
  readonly topP?: number;
  /** Sequence i uses seed + i, unless `seeds` gives each prompt its own. */
  readonly seed?: number;
  readonly seeds?: readonly number[];
  readonly stopTokenIds?: readonly number[];
  /** The LoRA adapter to decode with (null: the base model); default: the one the model has attached now. */
  readonly adapter?: NativeAdapter | null;
  /**
   * One grammar (or null) per prompt: each step samples only what the grammar allows and can
   * still finish within the sequence's budget; the log-probs are then under that masked
   * distribution (softmax over the allowed tokens).
   */
  readonly constraints?: readonly (NativeConstraint | null)[];
  /** One budget per prompt (default maxNewTokens): the tokens a constrained sequence must finish within. */
  readonly budgets?: readonly number[];
  /**
   * Soft thinking (SofT-GRPO): each sequence first makes `steps` soft tokens (top-p support of
   * softmax(logits / temperature), Gumbel-noised, y = softmax(q' / tau), the next input the
   * y-weighted mixture of embeddings), then samples its reply as usual. tau 1, topP 0.9 by default.
   */
  readonly softThinking?: { readonly steps: number; readonly tau?: number; readonly topP?: number };
}

/** A sequence's soft tokens: token j's support ids[offsets[j] .. offsets[j + 1]) with its noised logits q' and mixture weights y. */
export interface SoftTrace {
  readonly offsets: Int32Array;
  readonly ids: Int32Array;
  readonly noised: Float32Array;
  readonly weights: Float32Array;
  /** Each soft token's most weighted id (what the thinking reads as). */
  readonly argmax: Int32Array;
}

/** A grammar's token automaton in native memory (models/grammar/token-automaton.ts's flat arrays, checked). */
export interface NativeConstraint {
  readonly numStates: number;
}

export type FinishReason = "stop_token" | "length" | "stopped";

export interface NativeGeneration {
  readonly size: number;
  readonly running: number;
  /** Runs up to n decoding steps (the first also reads the prompts); returns how many still run. */
  step(n: number): number;
  stepAsync(n: number): Promise<number>;
  /** Ends sequence i (its text reached a stop string). */
  stop(i: number): void;
  result(i: number): { tokens: Int32Array; logprobs: Float32Array; finishReason: FinishReason | null; soft?: SoftTrace };
}

export interface NativeModule {
  Model: new (config: EngineConfig, options?: ModelOptions) => NativeModel;
  LoraAdapter: new (model: NativeModel, spec: AdapterSpec) => NativeAdapter;
  Generation: new (model: NativeModel, prompts: readonly Int32Array[], options: GenerationOptions) => NativeGeneration;
  Constraint: new (automaton: TokenAutomatonData) => NativeConstraint;
  /** C = alpha op(A) op(B) + beta C, row-major (tests and benchmarks). */
  gemm<A extends FloatArray>(ta: boolean, tb: boolean, M: number, N: number, K: number, alpha: number, A: A, lda: number, B: A, ldb: number, beta: number, C: A, ldc: number): void;
  isa(): { current: string; best: string };
  setIsa(name: "avx512" | "avx2" | "generic"): void;
  threads(): number;
  /** Threads for models created from now on (0: one per hardware thread). */
  setThreads(n: number): void;
  /** Measured fp32 fused-multiply-add throughput of all threads, GFLOP/s. */
  peakGflops(seconds?: number): number;
  /** Probes the GPU, its driver and cuBLAS (once; later calls give the same answer). */
  cuda(): CudaStatus;
  /**
   * Seconds per GPU product C[M,N] = op(A) op(B) on random operands (median of reps): mode fp32,
   * tf32, bf16 (fp32 operands, bf16 tensor cores) or bf16-operands (operands stored as bf16).
   */
  cudaGemmSeconds(mode: MatmulPrecision | "bf16-operands", ta: boolean, tb: boolean, M: number, N: number, K: number, reps: number): number;
  /**
   * "start": time each kind of GPU kernel (matrix products, attention forward, ...) of every CUDA
   * model, waiting for each (so slower than an untimed run); "stop": stop and return the totals.
   */
  cudaProfile(action: "start"): void;
  cudaProfile(action: "stop"): { what: string; calls: number; seconds: number }[];
}

let loaded: NativeModule | undefined;

/** The checkout's native/ folder (from the TypeScript sources and from dist/). */
export function nativeDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "native", "binding.gyp"))) return join(dir, "native");
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find the native/ folder of the socialworld checkout");
    dir = up;
  }
}

export function loadNative(): NativeModule {
  if (loaded) return loaded;
  const file = join(nativeDir(), "build", "Release", "socialworld_native.node");
  if (!existsSync(file)) throw new Error(`the native engine is not built (${file} is missing): run \`npm run build:native\``);
  loaded = createRequire(import.meta.url)(file) as NativeModule;
  return loaded;
}

/**
 * The device a `--device` choice means here: "auto" is cuda where the addon has the CUDA backend
 * and a GPU is visible, else cpu; "cuda" fails with the reason when it cannot run.
 */
export function resolveDevice(choice: Device | "auto"): Device {
  if (choice === "cpu") return "cpu";
  const status = loadNative().cuda();
  if (status.available) return "cuda";
  if (choice === "cuda") throw new Error(`the cuda device is not available: ${status.reason ?? "unknown reason"}`);
  return "cpu";
}

const nativeConstraints = new WeakMap<TokenAutomaton, NativeConstraint>();

/** The native copy of a token automaton (made once per automaton). */
export function nativeConstraint(automaton: TokenAutomaton): NativeConstraint {
  let c = nativeConstraints.get(automaton);
  if (!c) {
    c = new (loadNative().Constraint)(automaton);
    nativeConstraints.set(automaton, c);
  }
  return c;
}
