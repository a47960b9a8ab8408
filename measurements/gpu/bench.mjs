#!/usr/bin/env node
/**
 * Speed of the native engine on a GPU, one stage per call, each a JSON line on stdout (run.sh
 * runs the stages with their own timeouts and report.mjs prints the table):
 *
 *   node measurements/gpu/bench.mjs --stage train    --config 0.5b --precision bf16 [--batch 8 --seq 1024 --steps 5]
 *   node measurements/gpu/bench.mjs --stage profile  --config 0.5b --precision bf16
 *   node measurements/gpu/bench.mjs --stage generate --config 0.5b --batch 32 [--prompt 256 --new 256]
 *   node measurements/gpu/bench.mjs --stage grpo     --config 0.5b [--prompts 8 --samples 8 --prompt 128 --new 128]
 *   node measurements/gpu/bench.mjs --stage gemm     --config 0.5b
 *   node measurements/gpu/bench.mjs --stage memory   --config 0.5b --batch 4 --seq 16384 --checkpointing 1 [--steps 1]
 *
 * The memory stage is a training step's speed with the GPU memory the process holds after it
 * (nvidia-smi), with or without activation checkpointing; a shape that cannot fit reports the
 * engine's out-of-memory error, which names the bytes.
 *
 * --device cpu (or --addon PATH for another build of the addon) runs the same stages elsewhere,
 * to check this harness; --config tiny keeps that quick. Plain JavaScript without dependencies:
 * it runs with a bare `node` on the GPU machine.
 *
 * Model FLOPs, for MFU: 6 x (linear weights, the LM head included) per token for forward and
 * backward, plus causal attention 6 x layers x heads x head_dim x seq_len per token; MFU divides
 * by the H100 SXM's dense bf16 peak, 989 TFLOP/s, whatever the precision.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_ADDON, PARITY_PRESETS, rng } from "./parity.mjs";

export const PEAK_BF16 = 989e12;

/** The benchmark's architectures (Hugging Face's Qwen2 fields in engine form). */
export const BENCH_CONFIGS = {
  tiny: PARITY_PRESETS.tiny,
  // models/presets.ts's 10m at its full vocabulary
  "10m": { vocabSize: 4096, hiddenSize: 256, numLayers: 12, numHeads: 4, numKvHeads: 2, headDim: 64, intermediateSize: 768, maxPositionEmbeddings: 1024, rmsNormEps: 1e-6, ropeTheta: 10000, tieWordEmbeddings: true, attentionBias: true },
  // about 100M parameters (75M in the blocks, 25M in the tied embedding)
  "100m": { vocabSize: 32768, hiddenSize: 768, numLayers: 12, numHeads: 12, numKvHeads: 4, headDim: 64, intermediateSize: 2048, maxPositionEmbeddings: 4096, rmsNormEps: 1e-6, ropeTheta: 10000, tieWordEmbeddings: true, attentionBias: true },
  // Qwen2.5-0.5B's shape
  "0.5b": { vocabSize: 151936, hiddenSize: 896, numLayers: 24, numHeads: 14, numKvHeads: 2, headDim: 64, intermediateSize: 4864, maxPositionEmbeddings: 32768, rmsNormEps: 1e-6, ropeTheta: 1000000, tieWordEmbeddings: true, attentionBias: true },
};

/** Weights of the linear layers and the LM head (what 2 FLOPs per token per weight apply to). */
export function linearWeights(c) {
  const q = c.numHeads * c.headDim, kv = c.numKvHeads * c.headDim;
  return c.numLayers * (c.hiddenSize * (q + 2 * kv) + q * c.hiddenSize + 3 * c.hiddenSize * c.intermediateSize) + c.vocabSize * c.hiddenSize;
}

/** Forward + backward FLOPs of a training step on batch x seq tokens. */
export function trainFlops(c, batch, seq) {
  const tokens = batch * seq;
  return 6 * linearWeights(c) * tokens + 6 * c.numLayers * c.numHeads * c.headDim * seq * tokens;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Parameters drawn as Hugging Face initialises (N(0, 0.02) linear weights, norms 1), written in slices. */
function initModel(model) {
  const r = rng(42);
  const chunk = 1 << 24;
  const tensors = model.tensors();
  const norm = new Uint8Array(model.numParams);
  for (const t of tensors) if (t.name.endsWith("norm.weight")) norm.fill(1, t.offset, t.offset + t.size);
  for (let off = 0; off < model.numParams; off += chunk) {
    const n = Math.min(chunk, model.numParams - off);
    const p = new Float32Array(n);
    for (let i = 0; i < n; i++) p[i] = norm[off + i] ? 1 : (r() + r() + r() - 1.5) * 0.04; // about N(0, 0.02)
    model.writeParams(p, off);
  }
}

function tokens(n, vocab, seed) {
  const r = rng(seed);
  return Int32Array.from({ length: n }, () => Math.floor(r() * vocab));
}

function timeSteps(model, warmup, steps, step) {
  for (let i = 0; i < warmup; i++) step(i);
  model.synchronize();
  const times = [];
  for (let i = 0; i < steps; i++) {
    const t0 = performance.now();
    step(warmup + i);
    model.synchronize();
    times.push((performance.now() - t0) / 1000);
  }
  return times;
}

function trainStep(model, batch, seq, vocab) {
  const N = batch * seq;
  const tok = tokens(N, vocab, 1);
  const tgt = new Int32Array(N);
  for (let i = 0; i < N; i++) tgt[i] = (i + 1) % seq === 0 ? -1 : tok[i + 1];
  const w = new Float32Array(N).fill(1 / N);
  return (i) => {
    model.zeroGrad();
    model.forwardBackward(tok, tgt, w, batch, seq, true);
    model.adamwStep({ lr: 1e-4, weightDecay: 0.1, step: i + 1 });
  };
}

const stages = {
  train(addon, o) {
    const c = BENCH_CONFIGS[o.config];
    const model = newModel(addon, c, o);
    const times = timeSteps(model, 2, o.steps, trainStep(model, o.batch, o.seq, c.vocabSize));
    const s = median(times);
    const flops = trainFlops(c, o.batch, o.seq);
    return { msPerStep: s * 1000, tokensPerS: (o.batch * o.seq) / s, tflops: flops / s / 1e12, mfu: flops / s / PEAK_BF16, steps: times.length };
  },

  memory(addon, o) {
    const c = BENCH_CONFIGS[o.config];
    const model = newModel(addon, c, o);
    const times = timeSteps(model, 1, o.steps, trainStep(model, o.batch, o.seq, c.vocabSize));
    const s = median(times);
    return { checkpointing: model.activationCheckpointing, msPerStep: s * 1000, tokensPerS: (o.batch * o.seq) / s, mfu: trainFlops(c, o.batch, o.seq) / s / PEAK_BF16, memoryMiB: gpuMemoryMiB(), steps: times.length };
  },

  profile(addon, o) {
    const c = BENCH_CONFIGS[o.config];
    const model = newModel(addon, c, o);
    const step = trainStep(model, o.batch, o.seq, c.vocabSize);
    step(0);
    model.synchronize();
    addon.cudaProfile("start");
    step(1);
    model.synchronize();
    const parts = addon.cudaProfile("stop").sort((a, b) => b.seconds - a.seconds);
    const total = parts.reduce((a, p) => a + p.seconds, 0);
    return { parts: parts.map((p) => ({ ...p, share: p.seconds / total })), seconds: total };
  },

  generate(addon, o) {
    const c = BENCH_CONFIGS[o.config];
    const model = newModel(addon, c, o);
    const prompts = Array.from({ length: o.batch }, (_, i) => tokens(o.prompt, c.vocabSize, 100 + i));
    const run = () => {
      const g = new addon.Generation(model, prompts, { maxNewTokens: o.new, temperature: o.temperature });
      g.step(o.new + 1);
      let n = 0;
      for (let i = 0; i < o.batch; i++) n += g.result(i).tokens.length;
      return n;
    };
    run(); // warm-up: allocations, cuBLAS's choices
    const times = [];
    let generated = 0;
    for (let r = 0; r < o.repeats; r++) {
      const t0 = performance.now();
      generated = run();
      times.push((performance.now() - t0) / 1000);
    }
    const s = median(times);
    return { seconds: s, newTokens: generated, tokensPerS: generated / s };
  },

  grpo(addon, o) {
    // One GRPO step as the trainer takes it: rollouts (sampled), the log-probs of the sampled
    // tokens under the current policy, then the update in micro-batches and AdamW.
    const c = BENCH_CONFIGS[o.config];
    const model = newModel(addon, c, o);
    const prompts = Array.from({ length: o.prompts }, (_, i) => tokens(o.prompt, c.vocabSize, 200 + i));
    const group = prompts.flatMap((p) => Array.from({ length: o.samples }, () => p));
    const seqs = group.length, seq = o.prompt + o.new;
    const once = (k) => {
      const t0 = performance.now();
      const g = new addon.Generation(model, group, { maxNewTokens: o.new, temperature: 1, seeds: group.map((_, i) => 1000 * k + i) });
      g.step(o.new + 1);
      const tok = new Int32Array(seqs * seq), tgt = new Int32Array(seqs * seq).fill(-1);
      for (let i = 0; i < seqs; i++) {
        const out = g.result(i).tokens;
        tok.set(group[i], i * seq);
        tok.set(out.subarray(0, o.new), i * seq + o.prompt);
        for (let j = 0; j < out.length && o.prompt + j - 1 < seq; j++) tgt[i * seq + o.prompt - 1 + j] = out[j];
      }
      const t1 = performance.now();
      const micro = Math.max(1, Math.min(seqs, o.micro));
      const adv = new Float32Array(seqs * seq);
      for (let i = 0; i < adv.length; i++) adv[i] = tgt[i] < 0 ? 0 : ((i % 7) - 3) / (seqs * o.new);
      const pass = (backward) => {
        for (let b = 0; b < seqs; b += micro) {
          const n = Math.min(micro, seqs - b);
          model.forwardBackward(tok.subarray(b * seq, (b + n) * seq), tgt.subarray(b * seq, (b + n) * seq), adv.subarray(b * seq, (b + n) * seq), n, seq, backward, { temperature: 1 });
        }
      };
      pass(false);
      model.synchronize();
      const t2 = performance.now();
      model.zeroGrad();
      pass(true);
      model.adamwStep({ lr: 1e-6, step: k + 1 });
      model.synchronize();
      const t3 = performance.now();
      return { rollout: (t1 - t0) / 1000, logprobs: (t2 - t1) / 1000, update: (t3 - t2) / 1000 };
    };
    once(0);
    const r = once(1);
    return { ...r, total: r.rollout + r.logprobs + r.update, sequences: seqs, seqLen: seq };
  },

  gemm(addon, o) {
    // The 0.5B shape's training products at 8 x 1024 tokens (and the LM head's block of rows).
    const c = BENCH_CONFIGS[o.config];
    const N = o.batch * o.seq, C = c.hiddenSize, F = c.intermediateSize, QKV = (c.numHeads + 2 * c.numKvHeads) * c.headDim;
    const lmRows = Math.min(N, Math.floor(2 ** 28 / c.vocabSize));
    const shapes = [
      ["qkv forward", false, true, N, QKV, C],
      ["gate+up forward", false, true, N, 2 * F, C],
      ["down forward", false, true, N, C, F],
      ["down weight grad", true, false, C, F, N],
      ["LM head forward", false, true, lmRows, c.vocabSize, C],
      ["LM head weight grad", true, false, c.vocabSize, C, lmRows],
    ];
    const rows = [];
    for (const [name, ta, tb, M, Nn, K] of shapes)
      for (const mode of ["fp32", "tf32", "bf16", "bf16-operands"]) {
        const s = addon.cudaGemmSeconds(mode, ta, tb, M, Nn, K, o.reps);
        rows.push({ name, shape: `${M}x${Nn}x${K}`, mode, ms: s * 1000, tflops: (2 * M * Nn * K) / s / 1e12 });
      }
    return { rows };
  },
};

function newModel(addon, c, o) {
  const model = new addon.Model(c, o.device === "cpu" ? {} : { device: "cuda", precision: o.precision });
  if (o.checkpointing) model.activationCheckpointing = true;
  initModel(model);
  return model;
}

/** The GPU memory this process holds (MiB, from nvidia-smi), or null where nvidia-smi cannot say. */
function gpuMemoryMiB() {
  try {
    const rows = execFileSync("nvidia-smi", ["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"], { encoding: "utf8" }).trim().split("\n");
    const mine = rows.map((r) => r.split(",").map((x) => x.trim())).find(([pid]) => Number(pid) === process.pid);
    return mine ? Number(mine[1]) : null;
  } catch {
    return null;
  }
}

function parse(argv) {
  const o = { stage: "train", config: "0.5b", precision: "bf16", device: "cuda", batch: 8, seq: 1024, steps: 5, checkpointing: 0, prompt: 256, new: 256, temperature: 0, repeats: 2, prompts: 8, samples: 8, micro: 16, reps: 10, addon: DEFAULT_ADDON };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, "");
    if (!(k in o)) throw new Error(`unknown option --${k} (known: ${Object.keys(o).join(", ")})`);
    o[k] = typeof o[k] === "number" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!(o.stage in stages)) throw new Error(`unknown stage ${o.stage} (known: ${Object.keys(stages).join(", ")})`);
  if (!(o.config in BENCH_CONFIGS)) throw new Error(`unknown config ${o.config} (known: ${Object.keys(BENCH_CONFIGS).join(", ")})`);
  return o;
}

async function main() {
  const o = parse(process.argv.slice(2));
  const addon = createRequire(import.meta.url)(resolve(o.addon));
  const t0 = performance.now();
  const head = { engine: "native", stage: o.stage, config: o.config, device: o.device, precision: o.device === "cpu" ? "fp32" : o.precision };
  try {
    if (o.device !== "cpu" && !addon.cuda().available) throw new Error(`the cuda device is not available: ${addon.cuda().reason}`);
    const result = stages[o.stage](addon, o);
    const shape = o.stage === "generate" ? { batch: o.batch, prompt: o.prompt, new: o.new } : o.stage === "grpo" ? { prompts: o.prompts, samples: o.samples, prompt: o.prompt, new: o.new } : { batch: o.batch, seq: o.seq };
    if (o.stage === "memory") head.checkpointing = Boolean(o.checkpointing);
    process.stdout.write(JSON.stringify({ ...head, ...shape, ...result, wallS: (performance.now() - t0) / 1000 }) + "\n");
  } catch (err) {
    const shape = o.stage === "memory" ? { batch: o.batch, seq: o.seq, checkpointing: Boolean(o.checkpointing) } : {};
    process.stdout.write(JSON.stringify({ ...head, ...shape, error: err instanceof Error ? err.message : String(err) }) + "\n");
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
