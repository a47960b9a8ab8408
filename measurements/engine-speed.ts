/**
 * Speed of the native policy engine on this machine (a script, not a test):
 *   npm run bench:engine            (or: npm run build && node dist/measurements/engine-speed.js [--quick])
 *
 * Prints Markdown tables: the CPU's measured fp32 peak; the training matrix products of the 10M
 * preset; training (forward + backward + AdamW) and generation in tokens/s and GFLOP/s at the tiny
 * and 10M presets; and generation with the native engine against onnxruntime-node on the same
 * model (its ONNX export), both greedy on the same threads.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { saveCheckpoint } from "../models/checkpoint.js";
import { createFromScratch } from "../models/from-scratch.js";
import type { PolicyModel } from "../models/model.js";
import { loadNative, type EngineConfig } from "../models/native.js";
import { exportOnnx } from "../models/onnx/export.js";
import { OnnxCompleter } from "../models/onnx/session.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/engine-speed.js [--quick]   (or: npm run bench:engine)

Prints the native engine's speed on this machine: the CPU's measured fp32 peak, the 10M preset's
training matrix products, training and generation at the tiny and 10M presets, and generation
against onnxruntime-node on the same model.

Options:
  --quick   shorter timings and fewer shapes (a smoke run, not for reporting)
  --help    this text`;
const { quick } = scriptArgs({ name: "engine-speed", usage: USAGE, schema: z.object({ quick: z.boolean().default(false) }) });
const native = loadNative();
const threads = native.threads();

/** Linear-layer multiply-adds per token (q, k, v, o, gate, up, down and the LM head), times 2. */
function linearFlopsPerToken(e: EngineConfig): number {
  const q = e.numHeads * e.headDim, kv = e.numKvHeads * e.headDim;
  const perLayer = e.hiddenSize * (q + 2 * kv) + q * e.hiddenSize + 3 * e.hiddenSize * e.intermediateSize;
  return 2 * (e.numLayers * perLayer + e.vocabSize * e.hiddenSize);
}

/** Attention scores and weighted values for a query that sees `ctx` keys, times 2. */
function attentionFlops(e: EngineConfig, ctx: number): number {
  return 2 * 2 * e.numLayers * e.numHeads * e.headDim * ctx;
}

function timeIt(minSeconds: number, f: () => void): number {
  f();
  let reps = 0;
  const t0 = performance.now();
  let el = 0;
  do {
    f();
    reps++;
    el = (performance.now() - t0) / 1000;
  } while (el < minSeconds);
  return el / reps;
}

async function timeAsync(minSeconds: number, f: () => Promise<void>): Promise<number> {
  await f();
  let reps = 0;
  const t0 = performance.now();
  let el = 0;
  do {
    await f();
    reps++;
    el = (performance.now() - t0) / 1000;
  } while (el < minSeconds);
  return el / reps;
}

const fmt = (x: number, d = 1) => x.toFixed(d);
const table = (head: string[], rows: (string | number)[][]) =>
  [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? ":---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n") + "\n\n";

async function main(): Promise<void> {
  const minT = quick ? 0.3 : 1.5;
  const peak = Math.max(native.peakGflops(0.5), native.peakGflops(0.5));
  process.stdout.write(`## Native engine speed\n\nCPU: ${threads} threads, ${native.isa().current} kernels; measured fp32 peak (FMA throughput, all threads): **${fmt(peak)} GFLOP/s**.\n\n`);

  const models: Record<string, PolicyModel> = {};
  for (const preset of ["tiny", "10m"]) models[preset] = (await createFromScratch({ preset, seed: 0 })).model;
  const e10 = models["10m"]!.engine;

  // 1. The matrix products of one 10M training step (8 x 256 tokens), each timed alone.
  const N = 8 * 256;
  const { hiddenSize: C, intermediateSize: F, vocabSize: V } = e10;
  const QKV = (e10.numHeads + 2 * e10.numKvHeads) * e10.headDim;
  const shapes: [string, boolean, boolean, number, number, number, number][] = [
    // name, ta, tb, M, N, K, times per step
    ["qkv forward", false, true, N, QKV, C, e10.numLayers],
    ["o forward", false, true, N, C, C, e10.numLayers],
    ["gate+up forward", false, true, N, 2 * F, C, e10.numLayers],
    ["down forward", false, true, N, C, F, e10.numLayers],
    ["LM head forward", false, true, N, V, C, 1],
    ["gate+up input grad", false, false, N, C, 2 * F, e10.numLayers],
    ["down input grad", false, false, N, F, C, e10.numLayers],
    ["gate+up weight grad", true, false, 2 * F, C, N, e10.numLayers],
    ["down weight grad", true, false, C, F, N, e10.numLayers],
    ["qkv weight grad", true, false, QKV, C, N, e10.numLayers],
  ];
  let flopsAll = 0;
  let secondsAll = 0;
  const rows: (string | number)[][] = [];
  for (const [name, ta, tb, M, Nn, K, times] of shapes) {
    const A = new Float32Array(M * K).map(() => Math.random() - 0.5);
    const B = new Float32Array(K * Nn).map(() => Math.random() - 0.5);
    const Cc = new Float32Array(M * Nn);
    const s = timeIt(minT / 3, () => native.gemm(ta, tb, M, Nn, K, 1, A, ta ? M : K, B, tb ? K : Nn, 0, Cc, Nn));
    const gf = (2 * M * Nn * K) / s / 1e9;
    flopsAll += 2 * M * Nn * K * times;
    secondsAll += s * times;
    rows.push([name, `${M}x${Nn}x${K}`, fmt(gf), `${fmt((100 * gf) / peak)}%`]);
  }
  const matmulGf = flopsAll / secondsAll / 1e9;
  rows.push(["**all, weighted by use**", "", `**${fmt(matmulGf)}**`, `**${fmt((100 * matmulGf) / peak)}%**`]);
  process.stdout.write(`### Training matrix products, 10M preset (${N} tokens per step)\n\n` + table(["product", "M x N x K", "GFLOP/s", "% of peak"], rows));

  // 2. Training steps: forward + backward + AdamW.
  const trainRows: (string | number)[][] = [];
  for (const [preset, batch, seq] of [
    ["tiny", 8, 128],
    ["tiny", 32, 128],
    ["10m", 4, 256],
    ["10m", 8, 256],
    ["10m", 4, 512],
  ] as [string, number, number][]) {
    if (quick && batch * seq > 2048) continue;
    const m = models[preset]!;
    const e = m.engine;
    const n = batch * seq;
    const tokens = Int32Array.from({ length: n }, (_, i) => (i * 7919) % e.vocabSize);
    const targets = Int32Array.from({ length: n }, (_, i) => (i * 104729) % e.vocabSize);
    const weights = new Float32Array(n).fill(1 / n);
    let step = 0;
    const s = timeIt(minT, () => {
      m.trained.zeroGrad();
      m.native.forwardBackward(tokens, targets, weights, batch, seq, true);
      m.trained.gradNorm();
      m.trained.adamwStep({ lr: 1e-5, step: ++step });
    });
    const flops = 3 * (n * linearFlopsPerToken(e) + batch * attentionFlops(e, (seq * (seq + 1)) / 2 / 1));
    const gf = flops / s / 1e9;
    trainRows.push([preset, fmtParams(m.numParams), `${batch} x ${seq}`, fmt(s * 1000, 0), fmt(n / s, 0), fmt(gf), `${fmt((100 * gf) / peak)}%`]);
  }
  process.stdout.write("### Training (forward + backward + AdamW)\n\n" + table(["preset", "parameters", "batch x tokens", "ms / step", "tokens/s", "GFLOP/s", "% of peak"], trainRows));

  // 3. Generation, native against onnxruntime-node on the same model and threads.
  const genRows: (string | number)[][] = [];
  const promptLen = 32;
  const newTokens = quick ? 32 : 64;
  for (const preset of ["tiny", "10m"]) {
    const m = models[preset]!;
    const dir = mkdtempSync(join(tmpdir(), `sw-bench-${preset}-`));
    const created = await createFromScratch({ preset, seed: 0 });
    saveCheckpoint(dir, created.model, created.files);
    exportOnnx(created.model, dir);
    const onnx = await OnnxCompleter.load(dir, { threads });
    const e = m.engine;
    for (const batch of quick ? [1, 8] : [1, 4, 16]) {
      const prompts = Array.from({ length: batch }, (_, b) => Int32Array.from({ length: promptLen }, (_, i) => (i * 31 + b * 17) % e.vocabSize));
      const sNative = timeIt(minT, () => {
        const g = new native.Generation(created.model.native, prompts, { maxNewTokens: newTokens, temperature: 0 });
        g.step(newTokens);
      });
      const sOnnx = await timeAsync(minT, async () => {
        await onnxGreedy(onnx, prompts, newTokens);
      });
      const generated = batch * newTokens;
      const flops = batch * (promptLen + newTokens) * linearFlopsPerToken(e) + batch * sumAttention(e, promptLen + newTokens);
      genRows.push([preset, batch, fmt(generated / sNative, 0), fmt(flops / sNative / 1e9), fmt(generated / sOnnx, 0), fmt(flops / sOnnx / 1e9), `${fmt(sOnnx / sNative, 2)}x`]);
    }
    void m;
  }
  process.stdout.write(
    `### Generation (greedy, ${promptLen}-token prompts, ${newTokens} new tokens each, prefill included)\n\n` +
      table(["preset", "batch", "native tokens/s", "native GFLOP/s", "onnxruntime tokens/s", "onnxruntime GFLOP/s", "native speed-up"], genRows),
  );
}

function sumAttention(e: EngineConfig, len: number): number {
  let s = 0;
  for (let t = 1; t <= len; t++) s += attentionFlops(e, t);
  return s;
}

/** Greedy decoding through onnxruntime with the KV cache, no early stop (same work as native). */
async function onnxGreedy(onnx: OnnxCompleter, prompts: Int32Array[], newTokens: number): Promise<void> {
  const B = prompts.length;
  const P = prompts[0]!.length;
  const V = onnx.engine.vocabSize;
  const ids = BigInt64Array.from(prompts.flatMap((p) => Array.from(p, BigInt)));
  const pos = BigInt64Array.from({ length: B * P }, (_, i) => BigInt(i % P));
  let mask = new BigInt64Array(B * P).fill(1n);
  let step = await onnx.forward(ids, mask, pos, B, P, onnx.emptyCache(B));
  let len = P;
  let seq = P;
  for (let n = 1; n < newTokens; n++) {
    const logits = step.logits.data as Float32Array;
    const next = new BigInt64Array(B);
    for (let b = 0; b < B; b++) {
      const row = logits.subarray((b * seq + seq - 1) * V, (b * seq + seq) * V);
      let best = 0;
      for (let v = 1; v < V; v++) if (row[v]! > row[best]!) best = v;
      next[b] = BigInt(best);
    }
    len++;
    mask = new BigInt64Array(B * len).fill(1n);
    step = await onnx.forward(next, mask, new BigInt64Array(B).fill(BigInt(len - 1)), B, 1, step.present);
    seq = 1;
  }
}

function fmtParams(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : `${(n / 1e3).toFixed(0)}k`;
}

await main();
