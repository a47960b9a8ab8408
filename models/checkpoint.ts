/**
 * Checkpoints are Hugging Face model folders: config.json, model.safetensors (Hugging Face tensor
 * names), tokenizer.json, tokenizer_config.json and generation_config.json. A real Qwen2 /
 * Qwen2.5 folder loads as it is, and ours are in the layout Hugging Face transformers reads.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../store/write-atomic.js";
import { DataError } from "../worlds/core/errors.js";
import { readConfig, type Qwen2Config } from "./config.js";
import { PolicyModel } from "./model.js";
import type { ModelOptions } from "./native.js";
import { WeightFiles, writeSafetensors } from "./safetensors.js";
import { PolicyTokenizer, type GenerationConfig } from "./tokenizer.js";

export interface Checkpoint {
  readonly dir: string;
  readonly config: Qwen2Config;
  readonly model: PolicyModel;
  readonly tokenizer: PolicyTokenizer;
  readonly generationConfig: GenerationConfig;
}

/** Loads a checkpoint folder into a model on opts.device (default cpu): the files are the same for every device. */
export function loadCheckpoint(dir: string, opts: ModelOptions = {}): Checkpoint {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new DataError(dir, {}, "not a checkpoint folder (it does not exist or is not a directory)");
  const configFile = join(dir, "config.json");
  if (!existsSync(configFile)) throw new DataError(configFile, {}, "missing: the checkpoint folder has no config.json");
  const config = readConfig(configFile);
  const tokenizer = PolicyTokenizer.load(dir);
  if (tokenizer.vocabSize > config.vocab_size)
    throw new DataError(join(dir, "tokenizer.json"), {}, `the tokenizer has ${tokenizer.vocabSize} tokens but config.json's vocab_size is ${config.vocab_size}`);
  const weights = new WeightFiles(dir);
  let model: PolicyModel;
  try {
    model = new PolicyModel(config, opts);
  } catch (err) {
    throw new DataError(configFile, {}, (err as Error).message);
  }
  const expected = new Set<string>();
  model.updateParams(
    (params) => {
      for (const t of model.tensors()) {
        expected.add(t.name);
        weights.readInto(t.name, t.shape, params, t.offset);
      }
    },
    { overwrite: true },
  );
  // Tensors the config does not account for mean a different architecture: refuse rather than
  // run a model that silently ignores weights.
  const harmless = (n: string) => n.endsWith(".rotary_emb.inv_freq") || (n === "lm_head.weight" && config.tie_word_embeddings);
  const unexpected = weights.names().filter((n) => !expected.has(n) && !harmless(n));
  if (unexpected.length > 0)
    throw new DataError(join(dir, "model.safetensors"), { field: unexpected[0]! }, `${unexpected.length} tensor(s) this config does not use (${unexpected.slice(0, 3).join(", ")}${unexpected.length > 3 ? ", ..." : ""}): the checkpoint does not match config.json`);
  return { dir, config, model, tokenizer, generationConfig: tokenizer.generationConfig };
}

export interface CheckpointFiles {
  readonly config: Qwen2Config;
  readonly tokenizerJson: Record<string, unknown>;
  readonly tokenizerConfig: Record<string, unknown>;
  readonly generationConfig: GenerationConfig;
}

/** Writes a checkpoint folder (each file atomically). */
export function saveCheckpoint(dir: string, model: PolicyModel, files: CheckpointFiles): void {
  mkdirSync(dir, { recursive: true });
  writeJson(join(dir, "config.json"), files.config);
  writeJson(join(dir, "generation_config.json"), files.generationConfig);
  writeJson(join(dir, "tokenizer.json"), files.tokenizerJson);
  writeJson(join(dir, "tokenizer_config.json"), files.tokenizerConfig);
  const p = model.readParams();
  writeSafetensors(
    join(dir, "model.safetensors"),
    model.tensors().map((t) => ({ name: t.name, shape: t.shape, data: p.subarray(t.offset, t.offset + t.size) })),
  );
}

/** The files of a loaded checkpoint, to save it (or a trained copy) elsewhere. */
export function checkpointFiles(ck: Checkpoint): CheckpointFiles {
  return { config: ck.config, tokenizerJson: ck.tokenizer.tokenizerJson, tokenizerConfig: ck.tokenizer.tokenizerConfig, generationConfig: ck.generationConfig };
}

export function writeJson(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 2) + "\n");
}
