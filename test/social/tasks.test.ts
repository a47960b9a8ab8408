/**
 * Task ids: a tree's id may hold any character a real dump's post ids hold, and a task's id still
 * names its tree unambiguously (the cascade-level standard error groups questions by it).
 */
import { describe, expect, it } from "vitest";
import { cascadeOf } from "../../measurements/social-paired.js";
import { generateSocial } from "../../worlds/social/generator.js";
import { parseTrees } from "../../worlds/social/format.js";
import { taskTreeId, tasksOf } from "../../worlds/social/tasks.js";

describe("social task ids", () => {
  it("keep a generated tree's id as it is", () => {
    const trees = parseTrees(generateSocial(2, 1).jsonl, "gen.jsonl");
    for (const t of tasksOf(trees)) expect(t.id.startsWith(`${t.tree.id}/${t.user}@`)).toBe(true);
  });

  it("name their tree even when tree ids hold '/' and '%'", () => {
    const [a, b] = parseTrees(generateSocial(8, 1).jsonl, "gen.jsonl").filter((t) => tasksOf([t]).length > 0);
    // "x/y" and "x%2Fy" would both be written x/y... without the encoding; "x" is a prefix of both.
    const named = [
      { ...a!, tree: { ...a!.tree, id: "x/y" } },
      { ...b!, tree: { ...b!.tree, id: "x%2Fy" } },
      { ...a!, tree: { ...a!.tree, id: "x" } },
    ];
    const tasks = tasksOf(named);
    const clusters = new Map<string, Set<string>>();
    for (const t of tasks) {
      const c = cascadeOf(`f.jsonl#${t.id}`);
      clusters.set(c, (clusters.get(c) ?? new Set()).add(t.tree.id));
    }
    expect([...clusters.keys()].sort()).toEqual(["f.jsonl#x", "f.jsonl#x%252Fy", "f.jsonl#x%2Fy"]);
    for (const trees of clusters.values()) expect(trees.size).toBe(1);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
    expect(["x/y", "x%2Fy", "100%", "a/b/c"].map(taskTreeId)).toEqual(["x%2Fy", "x%252Fy", "100%25", "a%2Fb%2Fc"]);
  });
});
