/**
 * The CUDA backend against the CPU backend (measurements/gpu/parity.mjs: logits, every gradient,
 * AdamW, a GRPO step, generation, determinism, copies, resuming across devices, the
 * out-of-memory error). On a GPU where one is visible; and everywhere on the host emulator of the
 * CUDA backend (socialworld_native_emulated.node: the same kernels and backend code, compiled by
 * the host compiler, each CUDA thread a fiber), built here on first use.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadNative, nativeDir, type NativeModule } from "../../models/native.js";
import { PRESETS } from "../../models/presets.js";
import { PARITY_PRESETS, parityTable, runParity } from "../../measurements/gpu/parity.mjs";

const native = loadNative();
const status = native.cuda();

function failures(results: Awaited<ReturnType<typeof runParity>>): string[] {
  return results.filter((r) => !r.pass).map((r) => `${r.preset} ${r.check}: ${r.value} (${r.detail ?? ""})`);
}

describe("the CUDA parity checks", () => {
  it("use models/presets.ts's tiny and 1m architectures", () => {
    for (const name of ["tiny", "1m"] as const) {
      const p = PRESETS[name]!;
      const c = PARITY_PRESETS[name];
      expect({ h: c.hiddenSize, l: c.numLayers, nh: c.numHeads, kv: c.numKvHeads, f: c.intermediateSize, pos: c.maxPositionEmbeddings, v: c.vocabSize, tie: c.tieWordEmbeddings, theta: c.ropeTheta }).toEqual({
        h: p.hiddenSize,
        l: p.numLayers,
        nh: p.numHeads,
        kv: p.numKvHeads,
        f: p.intermediateSize,
        pos: p.maxPositionEmbeddings,
        v: p.vocab,
        tie: p.tieWordEmbeddings,
        theta: p.ropeTheta,
      });
      expect(c.headDim).toBe(p.hiddenSize / p.numHeads);
    }
  });

  it("say why the cuda device is missing, and a cuda model fails with that reason", () => {
    if (status.available) return;
    expect(status.reason).toMatch(/\w/);
    const reason = status.reason!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    expect(() => new native.Model(PARITY_PRESETS.tiny, { device: "cuda" })).toThrow(new RegExp(reason));
  });
});

describe.skipIf(!status.available)(`the CUDA backend on ${status.name ?? "a GPU"}${status.available ? "" : ` (skipped: ${status.reason})`}`, () => {
  it("matches the CPU backend", async () => {
    const results = await runParity({ addon: native });
    expect(failures(results), parityTable(results)).toEqual([]);
  }, 600_000);
});

describe("the CUDA backend on the host emulator", () => {
  const file = join(nativeDir(), "build", "Release", "socialworld_native_emulated.node");
  const emulated = (): NativeModule => {
    if (!existsSync(file)) {
      const r = spawnSync(process.execPath, [join(nativeDir(), "build.mjs"), "--emulator"], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`building the emulated addon failed:\n${r.stdout}\n${r.stderr}`);
    }
    return createRequire(import.meta.url)(file) as NativeModule;
  };

  it("matches the CPU backend on both presets (small shapes: several attention tiles on tiny)", async () => {
    const addon = emulated();
    expect(addon.cuda()).toMatchObject({ built: true, available: true, name: "CUDA emulator (host)" });
    // The emulated cuBLAS computes every precision in fp32: the tf32 and bf16 checks need a GPU.
    const results = await runParity({ addon, quick: true, precisions: [] });
    expect(failures(results), parityTable(results)).toEqual([]);
    expect(results.length).toBe(43);
  }, 600_000);

  it("refuses views over GPU memory and says what to use instead", () => {
    const m = new (emulated().Model)(PARITY_PRESETS.tiny, { device: "cuda" });
    expect(m.device).toBe("cuda");
    expect(() => m.params()).toThrow(/readParams\(\)\/writeParams\(\)/);
    expect(() => m.grads()).toThrow(/readGrads\(\)/);
    expect(() => m.moments()).toThrow(/readMoments\(\)\/writeMoments\(\)/);
    expect(() => m.writeParams(new Float32Array(m.numParams + 1))).toThrow(/run past the/);
    expect(() => new (emulated().Model)(PARITY_PRESETS.tiny, { device: "cuda", dtype: "float64" })).toThrow(/float32/);
    expect(() => new native.Model(PARITY_PRESETS.tiny, { precision: "bf16" })).toThrow(/cuda device/);
  });
});
