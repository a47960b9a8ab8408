/**
 * social-demo-compare.ts pairs two social demos' policies question by question: built and run as
 * users run it, on two demo-shaped folders whose "policies" are the random and majority agents'
 * bench runs on one test split (checked against the runs' own reports), with the cascade-level
 * standard error beside the question-level one, and one policy against another (`--against`); and the social scripts
 * refuse a prompt fact without the short prompt, naming the flag, before any work.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { pairedChange } from "../../benchmarks/paired-change.js";
import { cascadeOf, rightByQuestion } from "../../measurements/social-paired.js";
import { RunStore } from "../../store/run-store.js";
import { parseTrees } from "../../worlds/social/format.js";
import { generateSocial } from "../../worlds/social/generator.js";
import { tasksOf } from "../../worlds/social/tasks.js";
import { capture } from "../exports/helpers.js";
import { tempDir } from "../policy/fixtures.js";

const root = resolve(import.meta.dirname, "../..");
const script = (name: string) => join(root, "dist", "measurements", `${name}.js`);
if (!existsSync(script("social-demo-compare"))) throw new Error("dist/ is not built: run `npm run build` (npm install does it) before the tests");
const run = (name: string, args: string[]) => spawnSync(process.execPath, [script(name), ...args], { encoding: "utf8", timeout: 60_000 });

/** A demo's folder: its test split, a results.md, and bench runs standing for its SFT and SFT+GRPO policies. */
async function demoFolder(dir: string, test: string, agents: { sft: string; grpo: string }): Promise<Record<string, { accuracy: number; correct: number; total: number }>> {
  mkdirSync(dir, { recursive: true });
  copyFileSync(test, join(dir, "test.jsonl"));
  writeFileSync(join(dir, "results.md"), `Social world, ${agents.sft} standing for the policies\n`);
  const reports: Record<string, { accuracy: number; correct: number; total: number }> = {};
  for (const [name, spec] of [["sft", agents.sft], ["sft-grpo", agents.grpo]] as const) {
    const json = join(dir, `eval-${name}.json`);
    expect(await main(["bench", "social", "--data", join(dir, "test.jsonl"), "--context", "short", "--agent", spec, "--store", join(dir, "store"), "--json", json, "--quiet"])).toBe(0);
    reports[name] = JSON.parse(readFileSync(json, "utf8"));
  }
  return reports;
}

describe("social-demo-compare", () => {
  it("pairs the same policy of two demos on their shared test split, pooled over pairs, and refuses different splits", async () => {
    const dir = tempDir("sw-social-compare-");
    const test = join(dir, "test.jsonl");
    writeFileSync(test, generateSocial(3, 1001).jsonl);
    const other = join(dir, "other.jsonl");
    writeFileSync(other, generateSocial(3, 1002).jsonl);
    capture();
    let a, b;
    try {
      a = await demoFolder(join(dir, "a"), test, { sft: "random", grpo: "majority:" + test });
      b = await demoFolder(join(dir, "b"), test, { sft: "majority:" + test, grpo: "majority:" + test });
      await demoFolder(join(dir, "c"), other, { sft: "random", grpo: "random" });
    } finally {
      vi.restoreAllMocks();
    }
    const r = run("social-demo-compare", ["--before", join(dir, "a"), "--after", join(dir, "b")]);
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.split("\n");
    const row = (prefix: string) => rows.find((l) => l.startsWith(prefix))!.split("|").map((c) => c.trim());
    const total = a.sft!.total;
    expect(row("| SFT | a | b |").slice(4, 7)).toEqual([String(total), `${(100 * a.sft!.accuracy).toFixed(1)}%`, `${(100 * b.sft!.accuracy).toFixed(1)}%`]);
    // Majority against random: the change is the accuracies' difference, from the questions only one got right.
    const sft = row("| SFT (b) | SFT (a) |");
    const change = b.sft!.correct - a.sft!.correct;
    expect(Number(sft[3])).toBe(total);
    expect(sft[4]).toBe(`${change >= 0 ? "+" : "−"}${((100 * Math.abs(change)) / total).toFixed(1)}`);
    expect(Number(sft[7]) - Number(sft[8])).toBe(change);
    expect(Number(sft[5])).toBeGreaterThan(0);
    // The cascade-level standard error, over the split's trees with questions: the paired differences summed by tree.
    const trees = new Set(tasksOf(parseTrees(readFileSync(test, "utf8"), test)).map((t) => t.tree.id)).size;
    expect(trees).toBeGreaterThan(1);
    const store = async (d: string) => RunStore.open(join(dir, d, "store"));
    const right = async (d: string, name: string) => rightByQuestion(await store(d), JSON.parse(readFileSync(join(dir, d, `eval-${name}.json`), "utf8")).runId);
    // A question's tree: up to the first "/" after the file's "#" (a user or an item may have a "/" in its id).
    expect(["test.jsonl#t3/u1@t3", "test.jsonl#t3/users/9@t3", "test.jsonl#t3/u1@t3/c/2", "1:test.jsonl#t3/u/1@x"].map(cascadeOf)).toEqual(["test.jsonl#t3", "test.jsonl#t3", "test.jsonl#t3", "1:test.jsonl#t3"]);
    const byTree = pairedChange(await right("a", "sft"), await right("b", "sft"), cascadeOf);
    expect(byTree.cluster!.clusters).toBe(trees);
    expect(sft[6]).toBe(`${(100 * byTree.cluster!.standardError).toFixed(1)} (${trees})`);
    // The same agent on both sides: no change at all.
    expect(row("| SFT+GRPO (b) | SFT+GRPO (a) |").slice(3, 10)).toEqual([String(total), "+0.0", "0.0", `0.0 (${trees})`, "0", "0", "1.000"]);
    // Two pairs (the same twice here) pool their questions: twice the questions, the same change.
    const pooled = run("social-demo-compare", ["--before", `${join(dir, "a")},${join(dir, "a")}`, "--after", `${join(dir, "b")},${join(dir, "b")}`, "--agents", "SFT"]);
    expect(pooled.status, pooled.stderr).toBe(0);
    const p = pooled.stdout.split("\n").find((l) => l.startsWith("| SFT (after, 2 pairs pooled) |"))!.split("|").map((c) => c.trim());
    expect([Number(p[3]), p[4], Number(p[7]) - Number(p[8])]).toEqual([2 * total, sft[4], 2 * change]);
    expect(p[6]!.endsWith(` (${2 * trees})`)).toBe(true);
    // --against: each policy against another of the before folder (SFT+GRPO against SFT within a demo).
    const within = run("social-demo-compare", ["--before", join(dir, "a"), "--after", join(dir, "a"), "--agents", "SFT+GRPO", "--against", "SFT"]);
    expect(within.status, within.stderr).toBe(0);
    const w = within.stdout.split("\n").find((l) => l.startsWith("| SFT+GRPO (a) | SFT (a) |"))!.split("|").map((c) => c.trim());
    const grpoChange = a["sft-grpo"]!.correct - a.sft!.correct;
    expect(Number(w[7]) - Number(w[8])).toBe(grpoChange);
    // Another test split is not paired.
    const differ = run("social-demo-compare", ["--before", join(dir, "a"), "--after", join(dir, "c")]);
    expect(differ.status).toBe(2);
    expect(differ.stderr).toContain("have different test splits");
    const mismatch = run("social-demo-compare", ["--before", join(dir, "a"), "--after", `${join(dir, "b")},${join(dir, "c")}`]);
    expect(mismatch.stderr.split("\n")[0]).toBe("social-demo-compare: --after: 2 folders for the 1 of --before");
  });

  it("social-demo and social-type-probe refuse --stance or --agreement without --context short, naming the flag, before any work", () => {
    const out = join(tempDir("sw-social-refused-"), "never");
    for (const [name, flag, args] of [
      ["social-demo", "--agreement", ["--context", "full", "--out", out]],
      ["social-type-probe", "--stance", ["--model", "nowhere", "--data", "nowhere.jsonl"]],
    ] as const) {
      const r = run(name, [...args, flag]);
      expect(r.status).toBe(2);
      expect(r.stderr.split("\n")[0]).toBe(`${name}: ${flag}: goes with --context short (a fact of the short prompt's facts line)`);
    }
    expect(existsSync(out)).toBe(false);
  });
});
