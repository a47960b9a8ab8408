/**
 * The PEFT round trip against transformers, the half that runs here (the other half is
 * measurements/gpu/peft_parity.py, on the GPU machine where transformers is):
 *
 *   node dist/measurements/peft-check.js prepare --out DIR
 *     DIR/base: a checkpoint of the 1m preset (seeded, weights at a trained model's scale);
 *     DIR/adapter: a LoRA adapter of it as `train --lora` writes it (r=8, alpha=16, all-linear,
 *     B seeded and not zero); DIR/ours.json: our engine's logits of the base with the adapter.
 *     Carry DIR as .device/peft; run.sh's stage "peft" compares transformers' logits with them.
 *   node dist/measurements/peft-check.js check --base DIR/base --adapter OUT/peft/py-adapter
 *     loads the adapter the GPU stage wrote as PEFT writes it (py-adapter/logits.json: its
 *     logits by peft or a by-hand merge) with our engine and compares, every position.
 *
 * Prints a table; exit status 1 when a difference is over 1e-4 relative (the acceptance line).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { loadCheckpoint, saveCheckpoint } from "../models/checkpoint.js";
import { createFromScratch } from "../models/from-scratch.js";
import { DEFAULT_LORA } from "../models/lora-settings.js";
import { relativeDifference } from "../models/merge-lora.js";
import { saveAdapter, useAdapterFolder } from "../models/peft-adapter.js";
import { Rng } from "../worlds/core/rng.js";
import { scriptArgs } from "./script-args.js";

const LIMIT = 1e-4;
const USAGE = `node dist/measurements/peft-check.js prepare --out DIR [--seed S]
node dist/measurements/peft-check.js check --base DIR/base --adapter OUT/peft/py-adapter

prepare: a base checkpoint, a LoRA adapter of it and our logits, for measurements/gpu/peft_parity.py.
check: our engine's logits with an adapter PEFT wrote against the logits written beside it.
  --help   this text`;

const values = scriptArgs({
  name: "peft-check",
  usage: USAGE,
  schema: z.object({
    _: z.tuple([z.enum(["prepare", "check"], { error: "expected prepare or check" })]),
    out: z.string().min(1).optional(),
    base: z.string().min(1).optional(),
    adapter: z.string().min(1).optional(),
    seed: intArg(0, 2 ** 32 - 1).default(3),
  }),
});

if (values._[0] === "prepare") {
  if (!values.out) throw usage("prepare needs --out DIR");
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const rng = Rng.seeded(`peft-check:${values.seed}`);
  const m = await createFromScratch({ preset: "1m", seed: values.seed, corpus: ["Where will Ella look for the spinach? In the green_crate.", "Avery moved the apple to the box."] });
  // Weights at a trained model's scale (std 0.1 instead of the initial 0.02), so that the logits
  // spread and a relative difference means something.
  m.model.updateParams((p) => {
    for (const t of m.model.tensors()) if (!t.name.endsWith("norm.weight")) for (let i = t.offset; i < t.offset + t.size; i++) p[i]! *= 5;
  });
  const baseDir = join(out, "base");
  saveCheckpoint(baseDir, m.model, m.files);
  const adapter = m.model.newAdapter({ ...DEFAULT_LORA, r: 8, alpha: 16 }, values.seed, baseDir);
  adapter.weights.updateParams((p) => {
    for (const t of adapter.native.tensors()) if (t.name.endsWith("lora_B.weight")) for (let i = t.offset; i < t.offset + t.size; i++) p[i] = (rng.next() - 0.5) * 0.1;
  });
  saveAdapter(join(out, "adapter"), adapter);
  m.model.useAdapter(adapter);
  const ids = Array.from({ length: 24 }, (_, i) => (7 * i + 3) % m.model.vocabSize);
  const logits = Array.from(m.model.logits(ids));
  writeFileSync(join(out, "ours.json"), JSON.stringify({ ids, logits }));
  process.stdout.write(`wrote ${out}: base/ (1m preset, ${m.model.numParams} parameters), adapter/ (${adapter.numParams} parameters), ours.json (${ids.length} positions)\n`);
} else {
  if (!values.base || !values.adapter) throw usage("check needs --base DIR and --adapter DIR");
  const ref = JSON.parse(readFileSync(join(values.adapter, "logits.json"), "utf8")) as { ids: number[]; logits: number[]; peft: string | null };
  const ck = loadCheckpoint(values.base);
  const adapter = useAdapterFolder(ck.model, values.adapter);
  const ours = ck.model.logits(ref.ids);
  const diff = relativeDifference(ours, ref.logits);
  const plain = (() => {
    ck.model.useAdapter(undefined);
    return relativeDifference(ck.model.logits(ref.ids), ref.logits);
  })();
  process.stdout.write(
    [
      "| check | max abs difference / max abs logit | limit | pass |",
      "|---|---|---|---|",
      `| adapter written by ${ref.peft ? `peft ${ref.peft}` : "hand in PEFT's layout"} (r=${adapter.settings.r}, alpha=${adapter.settings.alpha}, ${adapter.settings.targets.join(" ")}), loaded by our engine | ${diff.toExponential(2)} | ${LIMIT} | ${diff <= LIMIT ? "yes" : "NO"} |`,
      `| the base alone against the same logits (the adapter matters) | ${plain.toExponential(2)} | > ${LIMIT} | ${plain > LIMIT ? "yes" : "NO"} |`,
      "",
    ].join("\n"),
  );
  process.exitCode = diff <= LIMIT && plain > LIMIT ? 0 : 1;
}

function usage(msg: string): Error {
  process.stderr.write(`peft-check: ${msg}\n\n${USAGE}\n`);
  process.exit(2);
}
