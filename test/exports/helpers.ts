/** Real runs to export: generated benchmark files played through `socialworld bench` into a temporary store. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { vi } from "vitest";
import { main } from "../../cli/main.js";
import { RunStore } from "../../store/run-store.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { generateSocial } from "../../worlds/social/generator.js";

export interface Captured {
  out: string;
  err: string;
}

/** Captures stdout and stderr of the command under test (restore with vi.restoreAllMocks). */
export function capture(): Captured {
  const c = { out: "", err: "" };
  vi.spyOn(process.stdout, "write").mockImplementation((s) => ((c.out += String(s)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((s) => ((c.err += String(s)), true));
  return c;
}

export interface BenchRun {
  readonly dir: string;
  readonly store: string;
  readonly data: string;
  readonly runId: string;
}

/** Writes `n` generated questions of a benchmark (social: trees) and runs them with the simulation agent. */
export async function benchRun(benchmark: "tomi" | "hitom" | "fantom" | "social", n: number, seed: number, mode: "vanilla" | "simulation" = "vanilla"): Promise<BenchRun> {
  const dir = mkdtempSync(join(tmpdir(), `sw-export-${benchmark}-`));
  let data: string;
  if (benchmark === "tomi") {
    const f = await generateTomi(n, seed);
    data = join(dir, "gen.txt");
    writeFileSync(data, f.txt);
    writeFileSync(join(dir, "gen.trace"), f.trace);
  } else if (benchmark === "hitom") {
    data = join(dir, "gen.json");
    writeFileSync(data, (await generateHitom(n, seed)).json);
  } else if (benchmark === "fantom") {
    data = join(dir, "gen.json");
    writeFileSync(data, generateFantom(n, seed).json);
  } else {
    // n trees (about 13 questions each).
    data = join(dir, "gen.jsonl");
    writeFileSync(data, generateSocial(n, seed).jsonl);
  }
  const store = join(dir, "store");
  const code = await main(["bench", benchmark, "--data", data, "--agent", "simulation", "--mode", mode, "--store", store, "--quiet"]);
  if (code !== 0) throw new Error(`bench ${benchmark} exited with ${code}`);
  const runId = (await RunStore.open(store)).list()[0]!.id;
  return { dir, store, data, runId };
}
