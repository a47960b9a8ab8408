/**
 * Decision points: a world's (every agent's turn in the scripted replay of a room's scenario, the
 * script's action as the reference) and a benchmark's (the question as a policy agent is asked it,
 * the official judge as exact match).
 */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { strictFormat } from "../../worlds/core/rewards/strict-format.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { WorldPoints } from "../../trainers/grpo/world-points.js";
import { loadScenario } from "../../worlds/registry.js";
import { pointDecoding } from "../../trainers/grpo/rollout.js";
import { NativeCompleter } from "../../models/generate.js";
import { tempDir, tinyModel } from "../policy/fixtures.js";

describe("world decision points", () => {
  it("every agent's turn of the scripted replay, with the script's action as the reference", async () => {
    const src = await WorldPoints.scripted("tomi", 2, 5);
    const scenario = await (await loadScenario("tomi")).create(5);
    const agents = scenario.world.agents(scenario.initialState);
    // Two episodes; each timestep but the last has one point per agent.
    expect(src.size % agents.length).toBe(0);
    const points = await Promise.all(Array.from({ length: src.size }, (_, i) => src.point(i)));
    const acting = points.filter((p) => p.reference !== "none");
    expect(acting.length).toBeGreaterThan(2);
    for (const p of acting) {
      const ref = (p as unknown as { referenceAction: unknown }).referenceAction;
      // The reference is well-formed, matches itself exactly and renders to the reference text.
      const parsed = strictFormat(JSON.stringify(ref), p.schema);
      expect(parsed.ok, p.id).toBe(true);
      expect(p.exact(ref)).toBe(1);
      expect(p.answerText(ref)).toBe(p.reference);
      expect(p.reference).toMatch(/^(enters|exits|moves) /);
    }
    expect(points[0]!.exact({ type: "none" })).toBe(points[0]!.reference === "none" ? 1 : 0);
    expect(src.dataId).toBe((await WorldPoints.scripted("tomi", 2, 5)).dataId);
    expect(src.dataId).not.toBe((await WorldPoints.scripted("tomi", 2, 6)).dataId);
  });

  it("from a room's episodes: only the turns given, with the observations the agents had", async () => {
    const scenario = await (await loadScenario("tomi")).create(9);
    const agent = scenario.world.agents(scenario.initialState)[0]!;
    const src = await WorldPoints.fromEpisodes("tomi", [{ seed: 9, turns: [{ agent, timestep: 2, observation: "what the agent saw" }] }], "You are a character.");
    expect(src.size).toBe(1);
    const p = await src.point(0);
    expect(p.messages).toEqual([
      { role: "system", content: "You are a character." },
      { role: "user", content: "what the agent saw" },
    ]);
    await expect(WorldPoints.fromEpisodes("atlantis", [{ seed: 1 }])).rejects.toThrow(/unknown world "atlantis"/);
  });
});

/** Twelve generated ToMi questions as decision points in `mode`, and an untrained tiny policy to sample from. */
async function generatedPoints(mode: "vanilla" | "simulation") {
  const dir = tempDir(`sw-grpo-${mode}-`);
  const f = await generateTomi(12, 3);
  writeFileSync(join(dir, "gen.txt"), f.txt);
  writeFileSync(join(dir, "gen.trace"), f.trace);
  const src = await BenchPoints.open("tomi", join(dir, "gen.txt"), mode);
  const m = await tinyModel(7);
  return { src, m, completer: new NativeCompleter("t", m.model, m.tokenizer) };
}

describe("benchmark decision points", () => {
  it("asks the question in the run's mode and judges with the benchmark's official rule", async () => {
    const dir = tempDir("sw-grpo-points-");
    const f = await generateTomi(6, 2);
    writeFileSync(join(dir, "gen.txt"), f.txt);
    writeFileSync(join(dir, "gen.trace"), f.trace);
    const sim = await BenchPoints.open("tomi", join(dir, "gen.txt"), "simulation");
    const van = await BenchPoints.open("tomi", join(dir, "gen.txt"), "vanilla", { limit: 3 });
    expect(sim.size).toBe(6);
    expect(van.size).toBe(3);
    expect(sim.dataId).not.toBe(van.dataId);
    const p = await sim.point(0);
    const v = await van.point(0);
    // ToMi's simulation prompt is the compact socialized context (worlds/tomi/compact-context.ts).
    expect(p.messages[0]!.content).toContain("Where each object was first and is now, and where each one and each two together saw it last:\n- story ");
    expect(p.messages[0]!.content).toMatch(/\n- \S+ \S+ now:\n/);
    expect(v.messages[0]!.content).toContain("Story:");
    const label = f.txt.split("\n").find((l) => l.includes("?"))!.split("\t")[1]!;
    expect(p.reference).toBe(label);
    expect(p.exact({ answer: label })).toBe(1);
    expect(p.exact({ answer: `the ${label}.` })).toBe(1);
    expect(p.exact({ answer: "nowhere" })).toBe(0);
  });

  it("lists the question's answers, and under constrain options samples only those", async () => {
    const { src, m, completer } = await generatedPoints("vanilla");
    for (const i of [0, 6]) {
      const p = await src.point(i);
      // The story's containers, the label among them.
      const listed = (p.options as { answer: string }[]).map((o) => o.answer);
      expect(listed.length).toBeGreaterThanOrEqual(2);
      expect(listed).toContain(p.reference);
      const grammar = pointDecoding(p, m.tokenizer, { constrain: "options", maxNewTokens: 16 }).grammar!;
      const prompt = m.tokenizer.encode(p.messages[0]!.content);
      const seeds = Array.from({ length: 8 }, (_, k) => 100 * i + k);
      const out = await completer.complete(seeds.map(() => prompt), { maxNewTokens: 16, temperature: 1.5 }, seeds, seeds.map(() => grammar));
      // An untrained policy at a high temperature still answers one of them, every time.
      for (const r of out) expect(listed).toContain(r.text.trim());
      // The schema's grammar lets it write other text.
      const free = await completer.complete(seeds.map(() => prompt), { maxNewTokens: 16, temperature: 1.5 }, seeds, seeds.map(() => pointDecoding(p, m.tokenizer, { constrain: "schema", maxNewTokens: 16 }).grammar!));
      expect(free.some((r) => !listed.includes(r.text.trim()))).toBe(true);
    }
  });

  it("over a compact context, samples only citations of its lines, and reads the cited line's value as the answer", async () => {
    const { src, m, completer } = await generatedPoints("simulation");
    for (const i of [0, 6]) {
      const p = await src.point(i);
      const text = p.messages[0]!.content;
      const lines = text.split("\n");
      const citations = lines.flatMap((l, k) => (l.startsWith("- ") && k + 1 < lines.length ? [`${l}\n${lines[k + 1]}`] : []));
      expect(citations.length).toBeGreaterThanOrEqual(4);
      // The same grammar whatever the mode but off: a reply is one of the lines.
      for (const constrain of ["options", "schema"] as const) {
        const grammar = pointDecoding(p, m.tokenizer, { constrain, maxNewTokens: 64 }).grammar!;
        const seeds = Array.from({ length: 8 }, (_, k) => 100 * i + k);
        const out = await completer.complete(seeds.map(() => m.tokenizer.encode(text)), { maxNewTokens: 64, temperature: 1.5 }, seeds, seeds.map(() => grammar));
        for (const r of out) {
          expect(citations).toContain(r.text.trim());
          const read = p.strict!(r.text);
          expect(read).toEqual({ ok: true, action: { answer: r.text.trim().split("\n")[1] } });
        }
      }
      expect(pointDecoding(p, m.tokenizer, { constrain: "off", maxNewTokens: 64 }).grammar).toBeUndefined();
      // The strict format refuses a bare place and a line's title with another line's place.
      expect(p.strict!(String(p.reference)).ok).toBe(false);
      const [title] = citations[0]!.split("\n");
      const other = citations.map((c) => c.split("\n")[1]).find((v) => v !== citations[0]!.split("\n")[1]);
      if (other) expect(p.strict!(`${title}\n${other}`).ok).toBe(false);
    }
  });
});
