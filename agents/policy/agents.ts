/**
 * The `policy:DIR` agent (a checkpoint on the native engine) and the `onnx:DIR` agent (an ONNX
 * decoder folder on onnxruntime-node). A folder is checked when the agent is made, so a bad one
 * fails before a run starts (with the file at fault); models load once per process and are
 * shared by every agent built on the same folder.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { DataError } from "../../worlds/core/errors.js";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { readConfig } from "../../models/config.js";
import { NativeCompleter } from "../../models/generate.js";
import { LanguageModelAgent } from "./lm-agent.js";
import { parseAgentTarget } from "./options.js";
import { OnnxCompleter } from "../../models/onnx/session.js";
import type { Completer } from "../../models/sampling.js";
import { PolicyTokenizer } from "../../models/tokenizer.js";

type Backend = { completer: Completer; tokenizer: PolicyTokenizer };
const natives = new Map<string, Backend>();
const onnxs = new Map<string, Promise<Backend>>();

export function policyAgent(spec: string, target: string): LanguageModelAgent {
  const { dir, options } = parseAgentTarget(spec, target);
  const abs = resolve(dir);
  let backend = natives.get(abs);
  if (!backend) {
    const ck = loadCheckpoint(abs);
    backend = { completer: new NativeCompleter(`policy:${dir}`, ck.model, ck.tokenizer), tokenizer: ck.tokenizer };
    natives.set(abs, backend);
  }
  const b = backend;
  return new LanguageModelAgent(spec, async () => b, options);
}

/**
 * Forgets the loaded model of a checkpoint folder (a self-play round the rooms no longer play):
 * agents already made keep theirs; the next `policy:DIR` loads the folder again.
 */
export function releasePolicy(dir: string): void {
  natives.delete(resolve(dir));
}

export function onnxAgent(spec: string, target: string): LanguageModelAgent {
  const { dir, options } = parseAgentTarget(spec, target);
  const abs = resolve(dir);
  const file = join(abs, "onnx", "model.onnx");
  if (!existsSync(file)) throw new DataError(file, {}, "missing: export the checkpoint first (`socialworld model export-onnx DIR`)");
  readConfig(join(abs, "config.json"));
  PolicyTokenizer.load(abs);
  const key = `${abs}:${options.threads ?? 0}`;
  const load = () => {
    let p = onnxs.get(key);
    if (!p) {
      p = OnnxCompleter.load(abs, options.threads ? { threads: options.threads } : {}).then((completer) => ({ completer, tokenizer: completer.tokenizer }));
      onnxs.set(key, p);
      p.catch(() => onnxs.delete(key));
    }
    return p;
  };
  return new LanguageModelAgent(spec, load, options);
}
