/**
 * The user-simulation recipe's SFT data (measurements/usersim-recipe.ts, `npm run demo:usersim`):
 * the train split's records as `bench usersim` asks them, each answered with its ground-truth
 * hierarchy, a seeded share also response-only; the same seed writes the same lines. Per-level
 * examples: each level asked as per-level generation asks it, answered with that level's block.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { usersimSftLines } from "../../measurements/usersim-recipe.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { DEFAULT_HIERARCHY } from "../../worlds/usersim/hierarchy.js";
import { parseReply } from "../../worlds/usersim/reply.js";
import { RESPONSE_ONLY_HIERARCHY, UsersimBenchmark, readHierarchyFile } from "../../worlds/usersim/index.js";
import { levelPromptText } from "../../worlds/question/world.js";

const COMPACT = join(import.meta.dirname, "../../worlds/usersim/hierarchies/compact.json");

describe("usersim-recipe's SFT examples", () => {
  it("asks each train record as bench does, answers its ground truth, and writes a seeded share response-only", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "sw-usersim-recipe-")), "g.jsonl");
    const gen = generateUsersim(60, 2);
    writeFileSync(file, gen.jsonl);
    const h = readHierarchyFile(COMPACT);
    const a = await usersimSftLines(file, { hierarchy: h, responseOnlyShare: 0.5, seed: 7 });
    const train = gen.records.filter((r) => r.split === "train").length;
    expect(a.records).toBe(train);
    expect(a.hierarchical).toBe(train);
    expect(a.responseOnly).toBeGreaterThan(train * 0.25);
    expect(a.responseOnly).toBeLessThan(train * 0.75);
    expect(a.lines).toHaveLength(train + a.responseOnly);
    const examples = a.lines.map((l) => JSON.parse(l) as { prompt: string; response: string });
    const full = examples.filter((e) => e.response.startsWith("<stance>"));
    const alone = examples.filter((e) => !e.response.startsWith("<stance>"));
    expect(full).toHaveLength(train);
    // Each answer is the record's reference in its hierarchy's text form, and parses there.
    for (const e of full) expect(parseReply(e.response, h).ok).toBe(true);
    for (const e of alone) expect(parseReply(e.response, RESPONSE_ONLY_HIERARCHY).ok).toBe(true);
    // The prompt is the benchmark's own, with the compact hierarchy's descriptions.
    const b = new UsersimBenchmark({ hierarchy: h, split: "train" });
    const items = await b.load(file);
    const asked = new Map(items.map((item) => [b.task(item, "vanilla").prompt, String(item.answer)]));
    for (const e of full) expect(asked.get(e.prompt)).toBe(e.response);
    expect(full[0]!.prompt).toContain("<stance>\nyour position on each target\n</stance>");
    expect(full[0]!.prompt).not.toContain(DEFAULT_HIERARCHY.states[0]!.desc);
    // Seeded: the same lines again; another seed another order.
    expect((await usersimSftLines(file, { hierarchy: h, responseOnlyShare: 0.5, seed: 7 })).lines).toEqual(a.lines);
    expect((await usersimSftLines(file, { hierarchy: h, responseOnlyShare: 0.5, seed: 8 })).lines).not.toEqual(a.lines);
    // No response-only examples at share 0; a share outside [0, 1] is refused.
    expect((await usersimSftLines(file, { hierarchy: h, responseOnlyShare: 0, seed: 7 })).lines).toHaveLength(train);
    await expect(usersimSftLines(file, { hierarchy: h, responseOnlyShare: 2, seed: 7 })).rejects.toThrow(/responseOnlyShare/);
  });

  it("writes per-level examples: each level's prompt as per-level generation asks it after the true levels before it, answered with that level's block", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "sw-usersim-recipe-")), "g.jsonl");
    const gen = generateUsersim(40, 3);
    writeFileSync(file, gen.jsonl);
    const h = readHierarchyFile(COMPACT);
    const joint = await usersimSftLines(file, { hierarchy: h, responseOnlyShare: 0.5, seed: 7 });
    const perLevel = await usersimSftLines(file, { hierarchy: h, responseOnlyShare: 0.5, generation: "per-level", seed: 7 });
    const n = h.states.length + 1;
    // The same records and response-only draws; one example a level (the response-only hierarchy has one).
    expect(perLevel.records).toBe(joint.records);
    expect(perLevel.responseOnly).toBe(joint.responseOnly);
    expect(perLevel.lines).toHaveLength(joint.records * n + joint.responseOnly);
    const examples = new Map(perLevel.lines.map((l) => JSON.parse(l) as { prompt: string; response: string }).map((e) => [e.prompt, e.response]));
    // Each record's levels as the policy agent asks them (levelPromptText: decodeLevels' prompt,
    // test/usersim/per-level.test.ts), the true blocks before it; the blocks joined are the reference.
    const b = new UsersimBenchmark({ hierarchy: h, split: "train" });
    for (const item of await b.load(file)) {
      const task = b.task(item, "vanilla");
      const levels = task.answerForm?.type === "pattern" ? task.answerForm.levels! : undefined;
      const parts = String(item.answer).split(/\n(?=<[a-z_]+>\n)/);
      expect(parts).toHaveLength(n);
      parts.forEach((part, k) => {
        expect(part).toMatch(new RegExp(levels!.items[k]!.pattern));
        expect(examples.get(levelPromptText(levels!, k, parts.slice(0, k)))).toBe(part);
      });
    }
    // The other examples are the response-only draws: a response block each.
    const responseOnly = [...examples.values()].filter((r) => r.startsWith("<response>") && parseReply(r, RESPONSE_ONLY_HIERARCHY).ok);
    expect(responseOnly.length).toBeGreaterThanOrEqual(joint.responseOnly);
    // Seeded as the joint lines are.
    expect((await usersimSftLines(file, { hierarchy: h, responseOnlyShare: 0.5, generation: "per-level", seed: 7 })).lines).toEqual(perLevel.lines);
  });
});
