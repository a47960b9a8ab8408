/**
 * A new model: a preset architecture, a tokenizer (built from a corpus, or taken from another
 * checkpoint) and seeded random weights, with the files that make it a checkpoint.
 */
import { generateTomi } from "../worlds/tomi/index.js";
import { trainBpe, SPECIAL_TOKENS } from "./bpe-trainer.js";
import { CHATML_TEMPLATE } from "./chat-template.js";
import type { CheckpointFiles } from "./checkpoint.js";
import { qwen2Config } from "./config.js";
import { initParams } from "./init.js";
import { PolicyModel } from "./model.js";
import { preset as presetByName } from "./presets.js";
import { PolicyTokenizer } from "./tokenizer.js";

export interface ScratchOptions {
  readonly preset: string;
  readonly seed: number;
  /** Texts to build the tokenizer from (default: generated ToMi stories, the project's own data). */
  readonly corpus?: Iterable<string>;
  readonly tokenizerKind?: "bpe" | "word";
  /** Use this checkpoint's tokenizer instead of building one. */
  readonly tokenizerFrom?: PolicyTokenizer;
  /** The longest sequence (prompt and reply) in tokens, instead of the preset's (positions are rotary: nothing learned depends on it). */
  readonly context?: number;
}

export interface ScratchModel {
  readonly model: PolicyModel;
  readonly files: CheckpointFiles;
  readonly tokenizer: PolicyTokenizer;
}

/** The default corpus: seeded generated ToMi stories and questions. */
export async function defaultCorpus(seed = 0): Promise<string[]> {
  const files = await generateTomi(600, seed);
  return files.txt.split("\n");
}

export async function createFromScratch(opts: ScratchOptions): Promise<ScratchModel> {
  const named = presetByName(opts.preset);
  if (opts.context !== undefined && !(Number.isInteger(opts.context) && opts.context >= 16)) throw new Error(`context: expected a whole number of tokens, at least 16 (got ${opts.context})`);
  const p = opts.context !== undefined ? { ...named, maxPositionEmbeddings: opts.context } : named;
  let tokenizerJson: Record<string, unknown>;
  let tokenizerConfig: Record<string, unknown>;
  let eos: number[];
  let pad: number | null;
  if (opts.tokenizerFrom) {
    tokenizerJson = opts.tokenizerFrom.tokenizerJson;
    tokenizerConfig = opts.tokenizerFrom.tokenizerConfig;
    eos = [...opts.tokenizerFrom.stopTokenIds];
    pad = opts.tokenizerFrom.generationConfig.pad_token_id ?? null;
  } else {
    const trained = trainBpe(opts.corpus ?? (await defaultCorpus(opts.seed)), { kind: opts.tokenizerKind ?? "bpe", vocabSize: p.vocab });
    tokenizerJson = trained.tokenizer;
    const ids = trained.specialIds;
    eos = [ids["<|im_end|>"], ids["<|endoftext|>"]];
    pad = ids["<|endoftext|>"];
    tokenizerConfig = {
      add_bos_token: false,
      add_prefix_space: false,
      added_tokens_decoder: Object.fromEntries(
        SPECIAL_TOKENS.map((content) => [String(ids[content]), { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true }]),
      ),
      additional_special_tokens: ["<|im_start|>", "<|im_end|>"],
      bos_token: null,
      chat_template: CHATML_TEMPLATE,
      clean_up_tokenization_spaces: false,
      eos_token: "<|im_end|>",
      errors: "replace",
      model_max_length: p.maxPositionEmbeddings,
      pad_token: "<|endoftext|>",
      split_special_tokens: false,
      tokenizer_class: "Qwen2Tokenizer",
      unk_token: null,
    };
  }
  const generationConfig = { eos_token_id: eos, ...(pad !== null ? { pad_token_id: pad } : {}), bos_token_id: null };
  const tokenizer = new PolicyTokenizer(tokenizerJson, tokenizerConfig, generationConfig);
  const engine = {
    vocabSize: tokenizer.vocabSize,
    hiddenSize: p.hiddenSize,
    numLayers: p.numLayers,
    numHeads: p.numHeads,
    numKvHeads: p.numKvHeads,
    headDim: p.hiddenSize / p.numHeads,
    intermediateSize: p.intermediateSize,
    maxPositionEmbeddings: p.maxPositionEmbeddings,
    rmsNormEps: 1e-6,
    ropeTheta: p.ropeTheta,
    tieWordEmbeddings: p.tieWordEmbeddings,
    attentionBias: true,
  };
  const config = qwen2Config(engine, { bos: null, eos });
  const model = new PolicyModel(config);
  initParams(model, opts.seed);
  return { model, tokenizer, files: { config, tokenizerJson, tokenizerConfig, generationConfig } };
}
