/**
 * The social benchmark through the program's own runner (benchmarks/runner.ts), as `bench social`
 * runs it: items from a generated file, the simulation, random and majority agents from the agent
 * registry, the judge and the metrics against scoring.ts's own computation, the world model's
 * label and its disagreements, the socialized contexts, depth filtering and BERTScore.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../agents/registry.js";
import { buildReport } from "../../benchmarks/report.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { SAME_AS_STATE } from "../../worlds/core/socialized-context.js";
import { loadBenchmark, loadSolver } from "../../worlds/registry.js";
import { bertScore, OnnxTokenEncoder } from "../../worlds/social/bertscore.js";
import type { SocialBenchItem, SocialBenchmark } from "../../worlds/social/benchmark.js";
import { generateSocial } from "../../worlds/social/generator.js";
import { scoreSocial, scoreTask } from "../../worlds/social/scoring.js";
import { table, writeModelFolder } from "../onnx-model-folder.js";

const dir = mkdtempSync(join(tmpdir(), "social-bench-"));
const testFile = join(dir, "test.jsonl");
const trainFile = join(dir, "train.jsonl");
writeFileSync(testFile, generateSocial(12, 1).jsonl);
writeFileSync(trainFile, generateSocial(30, 2).jsonl);

async function run(agentSpec: string, benchmark?: SocialBenchmark) {
  const b = benchmark ?? ((await loadBenchmark("social")) as SocialBenchmark);
  const items = b.load(testFile);
  const results = await runBenchmark({ benchmark: b, items, agent: await loadAgent(agentSpec), mode: "vanilla", concurrency: 4 });
  const report = buildReport({ benchmark: b, items, results, agent: agentSpec, mode: "vanilla", data: testFile, runId: null, startedAt: new Date(), finishedAt: new Date() });
  return { b, items, results, report };
}

describe("the social benchmark", () => {
  it("reads a tree file into one item per task, typed by the label, split by depth", async () => {
    const b = (await loadBenchmark("social")) as SocialBenchmark;
    const items = b.load(testFile);
    expect(items.length).toBeGreaterThan(80);
    expect(new Set(items.map((i) => i.splits!.depth))).toEqual(new Set(["0", "1"]));
    for (const it of items) {
      expect(it.type).toBe(it.task.label.type);
      expect(JSON.parse(it.answer as string).action).toBe(it.task.label.type);
      expect(it.id).toBe(`test.jsonl#${it.task.id}`);
    }
    const one = items[0]!;
    const q = b.task(one, "vanilla");
    // The prompt shows what the user could see and nothing of the latent block.
    expect(q.prompt).toContain(`What do you do with [${one.task.parent}]?`);
    expect(q.prompt).not.toMatch(/latent|draws|"stance"/);
    expect(q.prompt.startsWith(q.story)).toBe(true);
    expect(q.candidates!.map((c) => JSON.parse(c).action)).toEqual(["comment", "repost", "like", "ignore"]);
    const d1 = (await loadBenchmark("social", { depth: 1 })) as SocialBenchmark;
    expect(d1.load(testFile).every((i) => i.task.depth === 1)).toBe(true);
    expect(d1.load(testFile).length).toBe(items.filter((i) => i.task.depth === 1).length);
    const d4 = await loadBenchmark("social", { depth: 4 });
    expect(() => d4.load(testFile)).toThrow(/no prediction tasks at depth 4 \(the file's depths: 0, 1\)/);
  });

  it("gives the simulation agent every label, and the world model agrees with the generator's file", async () => {
    const { report } = await run("simulation");
    expect(report.accuracy).toBe(1);
    expect(report.metrics!.macroF1).toBe(1);
    expect(report.metrics!.rougeL).toBe(1);
    expect(report.metrics!["depth0.accuracy"]).toBe(1);
    expect(report.disagreements.total).toBe(0);
  });

  it("scores answers as scoring.ts does: the metrics equal scoreSocial's over the same replies", async () => {
    const { items, results, report } = await run("random:3");
    const scored = (items as SocialBenchItem[]).map((it, i) => scoreTask(it.task, results[i]!.answer));
    const direct = scoreSocial(scored);
    expect(report.accuracy).toBeCloseTo(direct.all.accuracy, 12);
    expect(report.metrics!.macroF1).toBeCloseTo(direct.all.macroF1, 12);
    expect(report.metrics!.rougeL).toBeCloseTo(direct.all.content.rougeL, 12);
    expect(report.metrics!.rougeLMatched).toBeCloseTo(direct.all.content.rougeLMatched, 12);
    expect(report.metrics!.format).toBe(1);
    for (const d of ["0", "1"]) {
      expect(report.metrics![`depth${d}.accuracy`]).toBeCloseTo(direct.byDepth[d]!.accuracy, 12);
      expect(report.metrics![`depth${d}.macroF1`]).toBeCloseTo(direct.byDepth[d]!.macroF1, 12);
      expect(report.splits.depth![d]!.accuracy).toBeCloseTo(direct.byDepth[d]!.accuracy, 12);
    }
    // A uniform choice of four types: about a quarter right.
    expect(report.accuracy).toBeGreaterThan(0.15);
    expect(report.accuracy).toBeLessThan(0.35);
  });

  it("fits the majority agent on another file's labels, per depth", async () => {
    const b = (await loadBenchmark("social")) as SocialBenchmark;
    const train = b.load(trainFile);
    const { results, items } = await run(`majority:${trainFile}`);
    for (const depth of [0, 1]) {
      const here = train.filter((t) => t.task.depth === depth);
      const counts = new Map<string, number>();
      for (const t of here) counts.set(t.type, (counts.get(t.type) ?? 0) + 1);
      const top = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
      for (const [i, it] of items.entries()) if (it.task.depth === depth) expect(JSON.parse(results[i]!.answer).action).toBe(top);
    }
    await expect(loadAgent("majority")).rejects.toThrow("majority:FILE needs the labelled file");
    await expect(loadAgent(`majority:${join(dir, "missing.jsonl")}`)).rejects.toThrow("does not exist");
  });

  it("names labels the latent model does not give as disagreements", async () => {
    const edited = join(dir, "edited.jsonl");
    const trees = generateSocial(6, 5).trees;
    const x = trees.flatMap((t) => t.interactions).find((i) => i.type === "comment")!;
    x.text = "Something the generator never wrote.";
    writeFileSync(edited, trees.map((t) => JSON.stringify(t)).join("\n") + "\n");
    const b = (await loadBenchmark("social")) as SocialBenchmark;
    const items = b.load(edited);
    const gts = await Promise.all(items.map((it) => b.groundTruth(it)));
    const bad = items.flatMap((it, i) => (gts[i]!.agrees ? [] : [{ it, gt: gts[i]! }]));
    expect(bad.length).toBe(1);
    expect(bad[0]!.gt.cause).toBe("latent_differs");
    expect(bad[0]!.it.task.user).toBe(x.user);
    // The world model's label is the generator's text, and the agent can be scored against it.
    expect(JSON.parse(bad[0]!.gt.label as string).content).not.toBe(x.text);
  });

  it("writes socialized contexts: what the user saw (no label) for the solver, the item's episode for the ground truth", async () => {
    const b = (await loadBenchmark("social")) as SocialBenchmark;
    const items = b.load(testFile);
    const it = items.find((i) => i.task.depth === 1 && i.task.label.type === "comment")!;
    const solver = await loadSolver("social");
    const q = b.task(it, "simulation");
    // Asked with a copy of the question (as the policy's simulation mode asks it).
    const solved = await solver({ ...q });
    expect(solved.answer).toBe(it.answer);
    const seen = solved.context!;
    const name = it.task.tree.users.find((u) => u.id === it.task.user)!.name!;
    expect(seen.agents_names).toContain(name);
    const me = seen.agents_names.indexOf(name);
    const last = seen.socialized_context.at(-1)!;
    expect(last.observations[me]).toBe(`${name}: ${SAME_AS_STATE}`);
    expect(JSON.stringify(seen)).not.toContain(it.task.label.content);
    const gt = await b.groundTruth(it);
    const decided = gt.context.socialized_context.at(-2)!;
    const i = gt.context.agents_names.indexOf(name);
    expect(decided.actions[i]).toContain(`comments on ${it.task.parent}: ${JSON.stringify(it.task.label.content)}`);
    expect(decided.observations[i]).toMatch(new RegExp(`<mental_state>I noticed ${it.task.parent} \\(.+'s (comment|repost)\\)\\. On .+ I am .+ \\(-?\\d\\.\\d\\d\\)\\.</mental_state>`));
    // Questions about the same item share one context.
    const sibling = items.find((x) => x !== it && x.task.tree === it.task.tree && x.task.parent === it.task.parent);
    if (sibling) expect((await b.groundTruth(sibling)).contextId).toBe(gt.contextId);
    expect(() => solver({ ...q, itemId: "other#x" })).toThrow("was not made by this process's social benchmark");
  });

  it("adds BERTScore with an ONNX encoder, equal to bertScore of each pair", async () => {
    const vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", ...new Set(generateSocial(12, 1).trees.flatMap((t) => [t.post.text, ...t.interactions.map((x) => x.text)]).join(" ").toLowerCase().match(/[a-z]+|[^\sa-z]/g)!)];
    const folder = writeModelFolder(table("social-bert", vocab), vocab);
    const b = (await loadBenchmark("social", { embedder: `onnx:${folder}` })) as SocialBenchmark;
    const { items, results, report } = await run("random:1", b);
    const encoder = OnnxTokenEncoder.open(folder);
    const pairs = (items as SocialBenchItem[]).flatMap((it, i) => (it.task.label.content.trim() ? [scoreTask(it.task, results[i]!.answer)] : []));
    const f1 = pairs.map((s) => bertScore(s.reply.content, s.task.label.content, encoder).f1);
    expect(report.metrics!.bertScoreF1).toBeCloseTo(f1.reduce((a, c) => a + c, 0) / f1.length, 6);
    expect(report.metrics!.bertScoreF1).toBeGreaterThan(0);
    await encoder.close();
    await b.close();
    await expect(loadBenchmark("social", { embedder: "onnx:/nonexistent/x" })).rejects.toThrow("--embedder: BERTScore encoder folder not found");
    await expect(loadBenchmark("social", { embedder: "lexical" })).rejects.toThrow("--embedder: the social benchmark's embedder is BERTScore's encoder, onnx:DIR");
  });
});
