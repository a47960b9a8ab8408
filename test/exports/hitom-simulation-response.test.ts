import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { benchRun, capture } from "./helpers.js";

beforeEach(() => {
  capture();
});
afterEach(() => vi.restoreAllMocks());

describe("export --mode simulation, Hi-ToM", () => {
  it("writes the assistant target as the simulation prompt asks for it: the bare option, no letter", async () => {
    const run = await benchRun("hitom", 10, 5, "simulation");
    const chat = join(run.dir, "chat.jsonl");
    expect(await main(["export", "--run", run.runId, "--format", "chat", "--out", chat, "--store", run.store])).toBe(0);
    const bench = await loadBenchmark("hitom");
    const items = await bench.load(run.data);
    const lines = readFileSync(chat, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { messages: { role: string; content: string }[] });
    expect(lines).toHaveLength(items.length);
    lines.forEach((l, i) => {
      const [user, assistant] = l.messages;
      // The simulation prompt lists "Choices: a, b, ..." without letters and asks for the answer only.
      expect(user!.content).toMatch(/Answer with the answer only\.\nAnswer:$/);
      const choices = /\nChoices: (.*)\n/.exec(user!.content)![1]!.split(", ");
      expect(choices).toContain(assistant!.content);
      expect(assistant!.content).toBe(String(items[i]!.answer));
      expect(bench.judge(items[i]!, assistant!.content).correct).toBe(true);
    });
  });
});
