import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { pythonJson, type SocializedContext } from "../../worlds/core/socialized-context.js";
import { benchRun, capture, type Captured } from "../exports/helpers.js";

let io: Captured;
beforeEach(() => {
  io = capture();
});
afterEach(() => vi.restoreAllMocks());

const table = (out: string) => out.trimEnd().split("\n");

describe("socialworld eval-context", () => {
  it("scores a folder of generated contexts against the world model's, file by file, and prints upstream's table", async () => {
    const run = await benchRun("tomi", 12, 41);
    const gt = join(run.dir, "gt");
    expect(await main(["export", "--run", run.runId, "--format", "sap", "--out", gt, "--store", run.store])).toBe(0);
    const files = readdirSync(gt).sort();
    const gen = join(run.dir, "gen");
    mkdirSync(gen);
    const ctx = (f: string) => JSON.parse(readFileSync(join(gt, f), "utf8")) as SocializedContext;
    // 0: a copy. 1: the social-world-model result layout, dict observations. 2: one agent sees
    // nothing at all. 3: not JSON. 4: timesteps out of order. The rest have no generated file.
    writeFileSync(join(gen, files[0]!), readFileSync(join(gt, files[0]!)));
    const c1 = ctx(files[1]!);
    const dict = (lines: string[]) => Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]));
    writeFileSync(
      join(gen, files[1]!),
      pythonJson({ question: "q", socialized_context: { ...c1, socialized_context: c1.socialized_context.map((s) => ({ ...s, observations: dict(s.observations), actions: dict(s.actions) })), context_manual: "m" } }),
    );
    const c2 = ctx(files[2]!);
    const blind = c2.agents_names[0]!;
    writeFileSync(join(gen, files[2]!), JSON.stringify({ ...c2, socialized_context: c2.socialized_context.map((s) => ({ ...s, observations: s.observations.map((o) => (o.startsWith(`${blind}:`) ? `${blind}: none` : o)) })) }));
    writeFileSync(join(gen, files[3]!), '{"agents_names": ["A"], "socialized_context": [');
    const c4 = ctx(files[4]!);
    writeFileSync(join(gen, files[4]!), JSON.stringify({ ...c4, socialized_context: c4.socialized_context.map((s, i) => ({ ...s, timestep: String(i === 0 ? 9 : i) })) }));

    const json = join(run.dir, "eval.json");
    const md = join(run.dir, "eval.md");
    io.out = io.err = "";
    expect(await main(["eval-context", "--gt", gt, "--gen", gen, "--json", json, "--md", md, "--quiet"])).toBe(0);
    const lines = table(io.out);
    expect(lines.slice(0, 2)).toEqual(["| File         | Structural | Observation Accuracy | Overall |", "|--------------|------------|----------------------|---------|"]);
    const id = (i: number) => files[i]!.replace(/\.json$/, "").padEnd(12);
    expect(lines[2]).toBe(`| ${id(0)} | 1.000 | 1.000 | 1.000 |`);
    expect(lines[3]).toBe(`| ${id(1)} | 1.000 | 1.000 | 1.000 |`);
    expect(lines[5]).toBe(`| ${id(3)} | 0.000 | 0.000 | 0.000 |`);
    // Timesteps 9, 2, 3...: neither a sequence nor in order: 0.3 + 0.4.
    expect(lines[6]).toBe(`| ${id(4)} | 0.700 | 1.000 | 0.910 |`);
    expect(lines).toHaveLength(2 + 5 + 2);
    expect(lines[8]).toMatch(/^\| \*\*Final Score\*\* \| - \| - \| \*\*0\.\d{3}\*\* \|$/);
    expect(readFileSync(md, "utf8")).toBe(io.out);
    for (const f of files.slice(5)) expect(io.err).toContain(`warning: no generated context for ${f.replace(/\.json$/, "")} (left out)`);
    expect(io.err).toContain(`warning: ${files[3]!.replace(/\.json$/, "")}: not valid JSON`);

    const report = JSON.parse(readFileSync(json, "utf8"));
    expect(report.observationSource).toBe("exact");
    expect(report.missing).toHaveLength(files.length - 5);
    const blindResult = report.results[2];
    // The blind agent misses exactly the events it perceives in the ground truth.
    const seenByBlind = blindResult.exact.alignment.filter((a: { observers: string[] }) => a.observers.includes(blind)).length;
    expect(seenByBlind).toBeGreaterThan(0);
    expect(blindResult.exact).toMatchObject({ missedObservations: seenByBlind, extraObservations: 0, correct: blindResult.exact.pairs - seenByBlind });
    expect(lines[4]).toBe(`| ${id(2)} | 1.000 | ${(blindResult.exact.correct / blindResult.exact.pairs).toFixed(3)} | ${(0.3 + 0.7 * (blindResult.exact.correct / blindResult.exact.pairs)).toFixed(3)} |`);
    expect(report.results[1].schemaProblems).toEqual([]);
    expect(report.results[4].structure.timesteps).toBe("out_of_order");
  });

  it("scores a simulation-mode run's own contexts with --run", async () => {
    const sim = await benchRun("hitom", 10, 6, "simulation");
    io.out = "";
    expect(await main(["eval-context", "--run", sim.runId, "--store", sim.store, "--quiet"])).toBe(0);
    const lines = table(io.out);
    expect(lines).toHaveLength(2 + 10 + 2);
    for (const l of lines.slice(2, 12)) expect(l).toMatch(/ \| 1\.000 \| 1\.000 \| 1\.000 \|$/);
    expect(lines[13]).toBe("| **Final Score** | - | - | **1.000** |");

    const vanilla = await benchRun("tomi", 6, 6);
    expect(await main(["eval-context", "--run", vanilla.runId, "--store", vanilla.store, "--quiet"])).toBe(2);
    expect(io.err).toContain("holds no context written by its agent (run the benchmark with --mode simulation");
  });

  it("explains bad arguments and bad ground truths", async () => {
    expect(await main(["eval-context", "--gt", "a"])).toBe(2);
    expect(io.err).toContain("--gt: give --gt DIR and --gen DIR, or --run RUN_ID");
    expect(await main(["eval-context", "--gt", "/nonexistent/gt", "--gen", "/nonexistent/gen"])).toBe(2);
    expect(io.err).toContain("bad input: /nonexistent/gt: no such folder");
    const run = await benchRun("tomi", 6, 2);
    const gt = join(run.dir, "gt");
    const gen = join(run.dir, "gen");
    mkdirSync(gt);
    mkdirSync(gen);
    writeFileSync(join(gt, "x.json"), JSON.stringify({ agents_names: ["A"], socialized_context: [{ timestep: "1", state: 3, observations: [], actions: [] }] }));
    writeFileSync(join(gen, "x.json"), "{}");
    expect(await main(["eval-context", "--gt", gt, "--gen", gen, "--quiet"])).toBe(2);
    expect(io.err).toContain(`bad input: ${join(gt, "x.json")} (socialized_context[0].state): `);
    expect(await main(["eval-context", "--gt", gt, "--gen", gen, "--judge", "not a url"])).toBe(2);
    expect(io.err).toContain("--judge: expected the endpoint's URL");
  });
});
