/**
 * The user-simulation recipe's SFT data (measurements/usersim-recipe.ts, `npm run demo:usersim`):
 * the train split's records as `bench usersim` asks them, each answered with its ground-truth
 * hierarchy, a seeded share also response-only; the same seed writes the same lines.
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
});
