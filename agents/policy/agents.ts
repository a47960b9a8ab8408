/**
 * The `policy:DIR` agent (a checkpoint on the native engine) and the `onnx:DIR` agent (an ONNX
 * decoder folder on onnxruntime-node). A folder is checked when the agent is made, so a bad one
 * fails before a run starts (with the file at fault); models load once per process and are
 * shared by every agent built on the same folder. `policy:ADIR` takes a LoRA adapter folder too
 * (PEFT's layout): its base (the folder its adapter_config.json names) loads once, and every
 * adapter of it decodes over those weights.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { DataError } from "../../worlds/core/errors.js";
import { AgentSpecError } from "../agent-spec-error.js";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { readConfig } from "../../models/config.js";
import { NativeCompleter } from "../../models/generate.js";
import { adapterBaseModel, isAdapterFolder, loadAdapter } from "../../models/peft-adapter.js";
import { LanguageModelAgent } from "./lm-agent.js";
import { parseAgentTarget } from "./options.js";
import { OnnxCompleter } from "../../models/onnx/session.js";
import type { Completer } from "../../models/sampling.js";
import { PolicyTokenizer } from "../../models/tokenizer.js";

type Backend = { completer: Completer; tokenizer: PolicyTokenizer };
const natives = new Map<string, Backend & { completer: NativeCompleter }>();
const adapted = new Map<string, Backend>();
const onnxs = new Map<string, Promise<Backend>>();

export function policyAgent(spec: string, target: string): LanguageModelAgent {
  const { dir, options } = parseAgentTarget(spec, target);
  const abs = resolve(dir);
  const b = isAdapterFolder(abs) ? adapterBackend(abs) : nativeBackend(abs, `policy:${dir}`);
  return new LanguageModelAgent(spec, async () => b, options);
}

function nativeBackend(abs: string, id: string): Backend & { completer: NativeCompleter } {
  let backend = natives.get(abs);
  if (!backend) {
    const ck = loadCheckpoint(abs);
    backend = { completer: new NativeCompleter(id, ck.model, ck.tokenizer), tokenizer: ck.tokenizer };
    natives.set(abs, backend);
  }
  return backend;
}

function adapterBackend(abs: string): Backend {
  let backend = adapted.get(abs);
  if (!backend) {
    const base = adapterBaseModel(abs);
    if (base === null || !existsSync(join(resolve(base), "config.json")))
      throw new DataError(join(abs, "adapter_config.json"), { field: "base_model_name_or_path" }, `names ${JSON.stringify(base)}, not a checkpoint folder here: the adapter's base model is needed to run it`);
    const b = nativeBackend(resolve(base), `policy:${base}`);
    const { adapter } = loadAdapter(abs, b.completer.model.native, b.completer.model.engine.numLayers);
    backend = { completer: b.completer.withAdapter(abs, adapter), tokenizer: b.tokenizer };
    adapted.set(abs, backend);
  }
  return backend;
}

/**
 * Forgets the loaded model of a checkpoint folder (a self-play round the rooms no longer play):
 * agents already made keep theirs; the next `policy:DIR` loads the folder again.
 */
export function releasePolicy(dir: string): void {
  natives.delete(resolve(dir));
  adapted.delete(resolve(dir));
}

export function onnxAgent(spec: string, target: string): LanguageModelAgent {
  const { dir, options } = parseAgentTarget(spec, target);
  if (options.soft_thinking !== undefined) throw new AgentSpecError(`${spec}: soft_thinking runs on the native engine (policy:DIR), not on onnxruntime`);
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
