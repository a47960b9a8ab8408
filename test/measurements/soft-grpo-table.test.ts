/**
 * soft-grpo-table.ts, built and run as users run it, at a tiny budget: discrete GRPO and
 * SofT-GRPO from one SFT policy in vanilla mode under the options grammar, scored by question type
 * against the world model's labels, with both runs' curves; and a --start that is not a policy
 * is refused, naming it, before any work.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../policy/fixtures.js";

const root = resolve(import.meta.dirname, "../..");
const script = join(root, "dist", "measurements", "soft-grpo-table.js");
if (!existsSync(script)) throw new Error("dist/ is not built: run `npm run build` (npm install does it) before the tests");
const run = (args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: "utf8", timeout: 120_000 });

describe("soft-grpo-table", () => {
  it("compares both runs from one policy by question type, in the mode and grammar asked, and draws their curves", () => {
    const out = tempDir("sw-soft-table-");
    const r = run(["--out", out, "--questions", "24", "--sft-steps", "2", "--grpo-steps", "2", "--prompts", "2", "--group-size", "2", "--eval", "12", "--mode", "vanilla", "--constrain", "options", "--balance", "type", "--threads", "1"]);
    expect(r.status, r.stderr).toBe(0);
    const results = readFileSync(join(out, "results.md"), "utf8");
    expect(results).toContain("ToMi, vanilla mode, replies under --constrain options");
    expect(results).toContain("2 steps of 2 prompts x 2 replies");
    // One row per policy in the by-type table, every ToMi type a column.
    const header = results.split("\n").find((l) => l.startsWith("| policy | first_order_tom"))!;
    for (const t of ["first_order_no_tom", "second_order_tom", "second_order_no_tom", "memory", "reality"]) expect(header).toContain(t);
    for (const p of ["SFT", "GRPO", "SofT-GRPO", "SofT-GRPO, 4 soft tokens (T 1)"]) expect(results).toMatch(new RegExp(`^\\| ${p.replace(/[()]/g, "\\$&")} \\| \\d+\\.\\d%`, "m"));
    // Both runs sampled under the options grammar, types in equal shares; the evaluations asked vanilla prompts under it.
    for (const dir of ["grpo", "soft-grpo"]) {
      expect(readFileSync(join(out, dir, "metrics.jsonl"), "utf8").trim().split("\n")).toHaveLength(2);
      const { settings } = JSON.parse(readFileSync(join(out, dir, "checkpoint-2", "trainer_state.json"), "utf8"));
      expect([settings.constrain, settings.balance, settings.steps, settings.prompts, settings.groupSize]).toEqual(["options", "type", 2, 2, 2]);
    }
    const report = JSON.parse(readFileSync(join(out, "eval-sft.json"), "utf8"));
    expect([report.mode, report.agent]).toEqual(["vanilla", `policy:${join(out, "sft")}?max_new_tokens=8&constrain=options`]);
    const svg = readFileSync(join(out, "curves.svg"), "utf8");
    expect(svg.match(/<polyline/g)).toHaveLength(4);
    expect(svg).toContain("SofT-GRPO");
  });

  it("refuses a --start that is not a policy checkpoint, naming it", () => {
    const out = tempDir("sw-soft-table-");
    const r = run(["--out", out, "--start", join(out, "nowhere")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--start ${join(out, "nowhere")} is not a policy checkpoint folder`);
  });
});
