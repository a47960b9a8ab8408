import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { citedAnswer } from "../../worlds/core/compact-context.js";
import { benchRun, capture } from "./helpers.js";

beforeEach(() => {
  capture();
});
afterEach(() => vi.restoreAllMocks());

describe("export --mode simulation, Hi-ToM", () => {
  it("writes the assistant target as the simulation prompt asks for it: the cited line of the compact context, whose value is the option", async () => {
    const run = await benchRun("hitom", 10, 5, "simulation");
    const chat = join(run.dir, "chat.jsonl");
    expect(await main(["export", "--run", run.runId, "--format", "chat", "--out", chat, "--store", run.store])).toBe(0);
    const bench = await loadBenchmark("hitom");
    const items = await bench.load(run.data);
    const lines = readFileSync(chat, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { messages: { role: string; content: string }[] });
    expect(lines).toHaveLength(items.length);
    lines.forEach((l, i) => {
      const [user, assistant] = l.messages;
      // The simulation prompt is the question over the compact context (worlds/hitom/compact-context.ts);
      // the target cites the line of the question's chain, named in the question's order, then its place.
      expect(user!.content).toMatch(/^Question: .*\nWhere the object really is, .*:\n- story /);
      expect(user!.content).toMatch(/\nAnswer:$/);
      const names = [...items[i]!.question.matchAll(/(?:does|think|thinks) ([A-Z]\w+)/g)].map((m) => m[1]!);
      expect(assistant!.content.split("\n")[0]).toMatch(new RegExp(`^- ${names.length ? names.join(" ") : "story"} \\w+:$`));
      expect(citedAnswer(assistant!.content)).toBe(String(items[i]!.answer));
      expect(bench.judge(items[i]!, citedAnswer(assistant!.content)).correct).toBe(true);
    });
  });
});
