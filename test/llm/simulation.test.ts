/**
 * Simulation mode end to end: a policy served by serve-policy writes the story's socialized
 * context (it learned the world model's), the llm agent validates it, answers from it, and logs
 * it; the context evaluation then scores the logged contexts against the world model's.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import type { PolicyServer } from "../../server/openai/app.js";
import { captureOutput } from "../capture.js";
import { tempDir } from "../policy/fixtures.js";
import { serve, simulationConversations, tomiCase, trainedPolicy, type StoryCase } from "./fixtures.js";

const io = captureOutput();
let story: StoryCase;
let server: PolicyServer;

beforeAll(async () => {
  story = await tomiCase("simulation");
  const dir = await trainedPolicy(simulationConversations(story, ['{"answer": "box"}', '{"answer": "crate"}']), { seed: 1, steps: 60, positions: 1024 });
  server = await serve({ swm: dir });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe("llm agent: simulation mode", () => {
  it("writes the story's socialized context once, answers every question from it, and logs it for the context evaluation", async () => {
    const store = join(tempDir(), "store");
    const out = join(tempDir(), "r.json");
    const agent = `llm:swm@${server.baseUrl}?temperature=0`;
    expect(await main(["bench", "tomi", "--data", story.file, "--mode", "simulation", "--agent", agent, "--store", store, "--json", out, "--quiet"]), io.err).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ mode: "simulation", total: 2, correct: 2 });

    const [run] = readdirSync(join(store, "runs"));
    const log = readEpisodeLog<any>(join(store, "runs", run!, "episodes.jsonl"));
    const infos = log.records.map((r) => r.turns[0].info);
    // One context request for the story, one answer per question.
    expect(server.service.health()[0]!.stats!.completed).toBe(3);
    const first = infos.find((i) => !i.contextReused);
    const second = infos.find((i) => i.contextReused);
    expect(first.calls.map((c: { purpose: string }) => c.purpose)).toEqual(["context", "answer"]);
    expect(second.calls.map((c: { purpose: string }) => c.purpose)).toEqual(["answer"]);
    for (const i of infos) {
      expect(i.socializedContext).toEqual(story.context);
      expect(i.contextProblems).toBeUndefined();
    }
    // The answer prompt is the context and the question, not the story.
    expect(log.records[0].turns[0].prompt).toContain('"agents_names":["Ella","Avery"]');
    expect(log.records[0].turns[0].prompt).not.toContain("1 Ella entered the garage.");

    io.out = "";
    const evalJson = join(tempDir(), "eval.json");
    expect(await main(["eval-context", "--run", run!, "--store", store, "--json", evalJson, "--quiet"]), io.err).toBe(0);
    expect(io.out).toMatch(/\| File +\| Structural \| Observation Accuracy \| Overall +\|/);
    const report = JSON.parse(readFileSync(evalJson, "utf8"));
    expect(report.results).toHaveLength(2);
    expect(report.mean).toEqual({ structural: 1, observationAccuracy: 1, overall: 1 });
  });
});
