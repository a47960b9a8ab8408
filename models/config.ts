/**
 * A checkpoint's config.json: Hugging Face's Qwen2 configuration (`model_type: "qwen2"`), checked
 * with zod and mapped to the engine's architecture. Fields we do not use are kept, so a real
 * checkpoint's config survives a load and save unchanged.
 */
import { z } from "zod";
import { DataError } from "../worlds/core/errors.js";
import type { EngineConfig } from "./native.js";
import { readTextInput } from "../worlds/core/text-input.js";

const positiveInt = z.number().int().positive();

export const Qwen2ConfigSchema = z
  .object({
    model_type: z.literal("qwen2", { error: 'expected "qwen2" (this engine runs the Qwen2 family)' }),
    vocab_size: positiveInt,
    hidden_size: positiveInt,
    intermediate_size: positiveInt,
    num_hidden_layers: positiveInt,
    num_attention_heads: positiveInt,
    num_key_value_heads: positiveInt.optional(),
    head_dim: positiveInt.optional(),
    max_position_embeddings: positiveInt.default(32768),
    rms_norm_eps: z.number().positive().default(1e-6),
    rope_theta: z.number().positive().optional(),
    rope_scaling: z.unknown().optional(),
    rope_parameters: z.object({ rope_theta: z.number().positive().optional(), rope_type: z.string().optional() }).loose().nullish(),
    hidden_act: z.literal("silu", { error: 'only "silu" is supported' }).default("silu"),
    tie_word_embeddings: z.boolean().default(false),
    attention_bias: z.boolean().optional(),
    use_sliding_window: z.boolean().default(false),
    bos_token_id: z.union([z.number().int(), z.null()]).optional(),
    eos_token_id: z.union([z.number().int(), z.array(z.number().int()), z.null()]).optional(),
  })
  .loose();

export type Qwen2Config = z.infer<typeof Qwen2ConfigSchema>;

/** Parses config.json text; errors name the file and the field. */
export function parseConfig(text: string, file: string): Qwen2Config {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new DataError(file, {}, `not valid JSON: ${(err as Error).message}`);
  }
  const r = Qwen2ConfigSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new DataError(file, { field: issue.path.join(".") || "(root)" }, issue.message);
  }
  const c = r.data;
  if (c.use_sliding_window) throw new DataError(file, { field: "use_sliding_window" }, "sliding-window attention is not supported");
  const scaling = c.rope_scaling ?? null;
  const ropeType = c.rope_parameters?.rope_type ?? (scaling && typeof scaling === "object" ? (scaling as { type?: string; rope_type?: string }).rope_type ?? (scaling as { type?: string }).type : undefined);
  if (ropeType !== undefined && ropeType !== "default")
    throw new DataError(file, { field: c.rope_parameters ? "rope_parameters.rope_type" : "rope_scaling" }, `rope scaling "${ropeType}" is not supported (only the default rotary embedding)`);
  const kv = c.num_key_value_heads ?? c.num_attention_heads;
  if (c.num_attention_heads % kv !== 0)
    throw new DataError(file, { field: "num_key_value_heads" }, `num_attention_heads (${c.num_attention_heads}) must be a multiple of num_key_value_heads (${kv})`);
  if (c.head_dim === undefined && c.hidden_size % c.num_attention_heads !== 0)
    throw new DataError(file, { field: "hidden_size" }, `hidden_size (${c.hidden_size}) must be a multiple of num_attention_heads (${c.num_attention_heads}) unless head_dim is given`);
  return c;
}

export function readConfig(file: string): Qwen2Config {
  return parseConfig(readTextInput(file), file);
}

export function engineConfig(c: Qwen2Config): EngineConfig {
  return {
    vocabSize: c.vocab_size,
    hiddenSize: c.hidden_size,
    numLayers: c.num_hidden_layers,
    numHeads: c.num_attention_heads,
    numKvHeads: c.num_key_value_heads ?? c.num_attention_heads,
    headDim: c.head_dim ?? c.hidden_size / c.num_attention_heads,
    intermediateSize: c.intermediate_size,
    maxPositionEmbeddings: c.max_position_embeddings,
    rmsNormEps: c.rms_norm_eps,
    ropeTheta: c.rope_theta ?? c.rope_parameters?.rope_theta ?? 10000,
    tieWordEmbeddings: c.tie_word_embeddings,
    // Qwen2 always has q/k/v biases; attention_bias: false reads Llama-style checkpoints without them.
    attentionBias: c.attention_bias ?? true,
  };
}

/** A config.json for a model of ours, in the form Hugging Face transformers writes for Qwen2. */
export function qwen2Config(e: EngineConfig, tokens: { bos?: number | null; eos: number | readonly number[] }, extra: Record<string, unknown> = {}): Qwen2Config {
  return {
    architectures: ["Qwen2ForCausalLM"],
    model_type: "qwen2",
    vocab_size: e.vocabSize,
    hidden_size: e.hiddenSize,
    intermediate_size: e.intermediateSize,
    num_hidden_layers: e.numLayers,
    num_attention_heads: e.numHeads,
    num_key_value_heads: e.numKvHeads,
    ...(e.headDim * e.numHeads !== e.hiddenSize ? { head_dim: e.headDim } : {}),
    max_position_embeddings: e.maxPositionEmbeddings,
    max_window_layers: e.numLayers,
    rms_norm_eps: e.rmsNormEps,
    rope_theta: e.ropeTheta,
    rope_scaling: null,
    hidden_act: "silu",
    initializer_range: 0.02,
    attention_dropout: 0.0,
    sliding_window: null,
    use_sliding_window: false,
    use_cache: true,
    tie_word_embeddings: e.tieWordEmbeddings,
    ...(e.attentionBias ? {} : { attention_bias: false }),
    bos_token_id: tokens.bos ?? null,
    eos_token_id: Array.isArray(tokens.eos) ? [...tokens.eos] : tokens.eos,
    torch_dtype: "float32",
    ...extra,
  } as Qwen2Config;
}
