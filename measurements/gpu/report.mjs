#!/usr/bin/env node
/**
 * The GPU run's tables, from the JSON lines bench.mjs and torch_reference.py wrote (and the
 * parity JSON): training speed with MFU and the ratio to PyTorch eager, generation against
 * transformers' generate, the GRPO step, the matrix-product modes, where a training step's time
 * goes, and the parity checks.
 *
 *   node measurements/gpu/report.mjs RESULTS.jsonl [PARITY.json]
 */
import { existsSync, readFileSync } from "node:fs";

const [resultsFile, parityFile] = process.argv.slice(2);
if (!resultsFile) {
  process.stderr.write("usage: node measurements/gpu/report.mjs RESULTS.jsonl [PARITY.json]\n");
  process.exit(2);
}
const records = existsSync(resultsFile)
  ? readFileSync(resultsFile, "utf8")
      .split("\n")
      .filter((l) => l.trim().startsWith("{"))
      .flatMap((l) => {
        try {
          return [JSON.parse(l)];
        } catch {
          return [];
        }
      })
  : [];

const f = (x, d = 1) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(d) : "-");
const pct = (x) => (typeof x === "number" ? `${(100 * x).toFixed(1)}%` : "-");
const table = (head, rows) => [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? ":---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n") + "\n";
const out = [];

const versions = records.find((r) => r.stage === "versions" && !r.error);
if (versions) out.push(`PyTorch ${versions.torch}, transformers ${versions.transformers}, ${versions.gpu}\n`);

// The memory stage's out-of-memory errors (check_fits' message) are results, which its table
// shows; any other error of it is a failure.
const doesNotFit = (r) => r.stage === "memory" && typeof r.error === "string" && r.error.startsWith("not enough GPU memory");
const errors = records.filter((r) => r.error && !doesNotFit(r));
if (errors.length) out.push("### Stages that failed\n\n" + errors.map((r) => `- ${r.engine} ${r.stage} ${r.config ?? ""} ${r.precision ?? ""} ${r.batch ?? ""}: ${r.error}`).join("\n") + "\n");

const train = records.filter((r) => r.stage === "train" && !r.error);
if (train.length) {
  const rows = [];
  for (const config of ["tiny", "10m", "100m", "0.5b"]) {
    const here = train.filter((r) => r.config === config);
    const eager = here.find((r) => r.engine === "pytorch-eager");
    for (const r of here)
      rows.push([config, `${r.engine}${r.engine === "native" ? ` ${r.precision}` : ""}`, `${r.batch} x ${r.seq}`, f(r.msPerStep), f(r.tokensPerS, 0), f(r.tflops), pct(r.mfu), eager ? `${f(r.tokensPerS / eager.tokensPerS, 2)}x` : "-", f(r.compileS)]);
  }
  out.push("### Training step (forward + backward + AdamW)\n\n" + table(["config", "engine", "batch x tokens", "ms / step", "tokens/s", "TFLOP/s", "MFU (989 bf16)", "vs PyTorch eager", "compile s"], rows));
}

const gen = records.filter((r) => r.stage === "generate" && !r.error);
if (gen.length) {
  const rows = [];
  for (const batch of [...new Set(gen.map((r) => r.batch))].sort((a, b) => a - b)) {
    const here = gen.filter((r) => r.batch === batch);
    const hf = here.find((r) => r.engine.startsWith("pytorch"));
    for (const r of here) rows.push([r.config, batch, `${r.engine} ${r.precision}`, `${r.prompt} + ${r.new}`, f(r.seconds, 2), f(r.tokensPerS, 0), hf ? `${f(r.tokensPerS / hf.tokensPerS, 2)}x` : "-"]);
  }
  out.push("### Generation (greedy; native bf16: bf16 copies of the fp32 weights in the products; transformers runs the model in bf16)\n\n" + table(["config", "batch", "engine", "prompt + new", "seconds", "new tokens/s", "vs transformers"], rows));
}

const grpo = records.filter((r) => r.stage === "grpo" && !r.error);
if (grpo.length)
  out.push(
    "### GRPO step (sampled rollouts, log-probs under the policy, update in micro-batches + AdamW)\n\n" +
      table(
        ["config", "precision", "sequences x tokens", "rollout s", "log-prob s", "update s", "total s"],
        grpo.map((r) => [r.config, r.precision, `${r.sequences} x ${r.seqLen}`, f(r.rollout, 2), f(r.logprobs, 2), f(r.update, 2), f(r.total, 2)]),
      ),
  );

const gemm = records.find((r) => r.stage === "gemm" && !r.error);
if (gemm) {
  const modes = ["fp32", "tf32", "bf16", "bf16-operands"];
  const byName = new Map();
  for (const r of gemm.rows) {
    const k = `${r.name}|${r.shape}`;
    if (!byName.has(k)) byName.set(k, {});
    byName.get(k)[r.mode] = r.tflops;
  }
  out.push(
    "### Matrix products (cuBLAS, TFLOP/s): fp32 operands in each compute mode, and bf16-stored operands\n\n" +
      table(["product", "M x N x K", ...modes], [...byName].map(([k, v]) => [...k.split("|"), ...modes.map((m) => f(v[m]))])),
  );
}

const peft = records.find((r) => r.stage === "peft" && !r.error);
if (peft) {
  out.push(
    "### LoRA adapters against transformers (stage peft)\n\n" +
      table(
        ["check", "how", "max abs difference / max abs logit", "limit"],
        [
          ["our adapter (our trainer's PEFT layout) in transformers", peft.a_loaded_by, typeof peft.a_ours_vs_transformers === "number" ? peft.a_ours_vs_transformers.toExponential(2) : "-", "1e-4"],
          ["an adapter as PEFT writes it, for our engine", peft.b_written_by, "peft-check.js check, with OUT brought back", "1e-4"],
        ],
      ),
  );
}

const memory = records.filter((r) => r.stage === "memory" && (!r.error || doesNotFit(r)));
if (memory.length)
  out.push(
    "### Activation checkpointing (training step, forward + backward + AdamW; GPU memory the process holds after it)\n\n" +
      table(
        ["config", "batch x tokens", "checkpointing", "ms / step", "tokens/s", "MFU", "GPU memory MiB"],
        memory.map((r) => [r.config, `${r.batch} x ${r.seq}`, r.checkpointing ? "on" : "off", ...(r.error ? [`does not fit: ${r.error}`, "", "", ""] : [f(r.msPerStep), f(r.tokensPerS, 0), pct(r.mfu), r.memoryMiB ?? "-"])]),
      ),
  );

const profile = records.find((r) => r.stage === "profile" && !r.error);
if (profile)
  out.push(
    `### Where a ${profile.config} training step's time goes (${profile.precision}; each kernel waited for: ${f(profile.seconds * 1000)} ms in all)\n\n` +
      table(["kernels", "calls", "ms", "share"], profile.parts.map((p) => [p.what, p.calls, f(p.seconds * 1000), pct(p.share)])),
  );

if (parityFile && existsSync(parityFile)) {
  const { results } = JSON.parse(readFileSync(parityFile, "utf8"));
  const fmt = (x) => (typeof x === "number" ? (x === 0 ? "0" : x.toExponential(2)) : "-");
  out.push(
    `### Parity with the CPU backend: ${results.filter((r) => r.pass).length} of ${results.length} checks pass\n\n` +
      table(["preset", "check", "measured", "limit", "result"], results.map((r) => [r.preset, r.check, fmt(r.value), fmt(r.limit), r.pass ? "pass" : "**FAIL**"])),
  );
}

process.stdout.write(out.join("\n") || "no results\n");
