/**
 * The LLM-judge path end to end against an OpenAI-compatible endpoint: the project's own
 * `serve-policy` serving a small policy trained here to answer the judge's prompts (captured from
 * the judge itself) with a verdict. `bench usersim --judge llm:judge@URL` scores through it: the
 * requests reach the server, the answers are read (no fallback), and the report's response
 * alignment is the served model's score. A judge endpoint that is down stops the run, resumable.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import type { JudgeModel } from "../../worlds/question/benchmark.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { simulationAnswer, UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { RESPONSE_ONLY_HIERARCHY } from "../../worlds/usersim/hierarchy.js";
import { serve, trainedPolicy, type Conversation } from "../llm/fixtures.js";
import type { PolicyServer } from "../../server/openai/app.js";

const io = captureOutput();
const VERDICT = '{"scores": [{"id": 1, "reason": "same points", "score": 0.875}]}';
const RESPONSE_ONLY = join(import.meta.dirname, "../../worlds/usersim/hierarchies/response-only.json");

let server: PolicyServer | undefined;
afterAll(async () => {
  await server?.close();
});

describe("the LLM judge through serve-policy", () => {
  it("scores bench usersim with the served model's verdicts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-usersim-endpoint-"));
    const data = join(dir, "g.jsonl");
    writeFileSync(data, generateUsersim(3, 21).jsonl);
    // The prompts the judge will send for the simulation agent's replies, captured from the judge itself.
    const prompts: string[] = [];
    const capture: JudgeModel = { id: "capture", ask: async (p) => (prompts.push(p), VERDICT) };
    const b = new UsersimBenchmark({ hierarchy: RESPONSE_ONLY_HIERARCHY, judgeModel: capture });
    for (const item of await b.load(data)) await b.assess!(item, [simulationAnswer(b.task(item, "vanilla"))]);
    expect(prompts).toHaveLength(3);
    const convs: Conversation[] = prompts.map((p) => [{ role: "user", content: p }, { role: "assistant", content: VERDICT }]);
    const judge = await trainedPolicy(convs, { seed: 2, steps: 40, positions: 2048 });
    server = await serve({ judge });

    const json = join(dir, "r.json");
    const spec = `llm:judge@${server.baseUrl}?response_format=text&temperature=0&max_tokens=40&retries=0`;
    const code = await main(["bench", "usersim", "--data", data, "--agent", "simulation", "--hierarchy", RESPONSE_ONLY, "--judge", spec, "--json", json, "--store", join(dir, "store"), "--quiet"]);
    expect(code, io.err).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8"));
    expect(report.metrics).toMatchObject({ response: 0.875, judge_requests: 3, judge_fallbacks: 0, judge_cached: 0 });
    expect(report.accuracy).toBeCloseTo(0.875, 10);

    // The endpoint gone: the run stops with the endpoint's error rather than scoring on without its judge.
    await server.close();
    server = undefined;
    const down = await main(["bench", "usersim", "--data", data, "--agent", "simulation", "--hierarchy", RESPONSE_ONLY, "--judge", spec, "--store", join(dir, "store2"), "--quiet"]);
    expect(down).toBe(1);
    expect(io.err).toMatch(/the judge failed after 0 of 3 items: .*ECONNREFUSED/);
    expect(io.err).toMatch(/0\/3 questions logged; continue with --resume \S+/);
  }, 120_000);
});
