/** The LLM judge's prompt, its requests to an endpoint (a local HTTP server here), reply handling, and how the evaluation uses a judge. */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { evaluateContexts, type ContextPair } from "../../benchmarks/context-eval.js";
import { EndpointJudge, judgePrompt, parseJudgeReply, type ContextJudge, type JudgeInput } from "../../benchmarks/context-eval/judge.js";

const gt = {
  agents_names: ["A", "B"],
  socialized_context: [
    { timestep: "1", state: "none", observations: ["A: none", "B: none"], actions: ["A: enters the den", "B: none"] },
    { timestep: "2", state: "A entered the den.", observations: ["A: <same_as_state />", "B: none"], actions: ["A: none", "B: none"] },
  ],
};

describe("context judge", () => {
  it("asks with both contexts, the story and the question, from the prompt file", () => {
    const input: JudgeInput = { fileId: "7", groundTruth: gt, generated: { agents_names: ["A"], socialized_context: [] }, story: "A entered the den.", question: "Where is A?" };
    const prompt = judgePrompt(input);
    expect(prompt).toContain("Story:\nA entered the den.");
    expect(prompt).toContain("Question asked about the story:\nWhere is A?");
    expect(prompt).toContain('"state": "A entered the den."');
    expect(prompt).toContain('Generated socialized context:\n{\n  "agents_names": [\n    "A"\n  ],\n  "socialized_context": []\n}');
    expect(prompt).toMatch(/Reply with JSON only: \{"score"/);
    expect(judgePrompt({ fileId: "7", groundTruth: gt, generated: gt, question: " " })).toContain("Story:\n(not given)\n\nQuestion asked about the story:\n(not given)");

  });

  it("asks an endpoint at temperature 0 with the key, and retries a busy one (503, then 429 with Retry-After)", async () => {
    const seen: { auth?: string; body: any }[] = [];
    const replies = [
      { status: 503, body: "overloaded" },
      { status: 429, body: "slow down", headers: { "retry-after": "0" } },
      { status: 200, body: JSON.stringify({ id: "c", choices: [{ index: 0, message: { role: "assistant", content: 'Sure: {"score": 0.8, "reasoning": "B misses one event"}' } }] }) },
    ];
    const server = createServer(async (req: IncomingMessage, res) => {
      let text = "";
      for await (const chunk of req) text += chunk;
      seen.push({ ...(req.headers.authorization ? { auth: req.headers.authorization } : {}), body: JSON.parse(text) });
      const r = replies[Math.min(seen.length - 1, replies.length - 1)]!;
      res.writeHead(r.status, { "content-type": r.status === 200 ? "application/json" : "text/plain", ...(r.headers ?? {}) });
      res.end(r.body);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
      const judge = new EndpointJudge({ baseUrl: base, model: "judge-m", apiKey: "k", backoffMs: 5 });
      const input: JudgeInput = { fileId: "1", groundTruth: gt, generated: gt, story: "A entered the den." };
      expect(await judge.judge(input)).toEqual({ score: 0.8, reasoning: "B misses one event" });
      expect(seen).toHaveLength(3);
      expect(seen[2]).toEqual({ auth: "Bearer k", body: { model: "judge-m", temperature: 0, stream: false, messages: [{ role: "user", content: judgePrompt(input) }] } });
      expect(judge.id).toBe(`judge-m at ${base}`);

      // An endpoint that keeps failing: the error names it and every attempt.
      const down = new EndpointJudge({ baseUrl: base, model: "judge-m", retries: 1, backoffMs: 5 });
      replies.splice(0, replies.length, { status: 500, body: "broken" });
      await expect(down.judge(input)).rejects.toThrow(/HTTP 500.*2 attempts/);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it("reads replies as upstream does: JSON alone or inside text, the score clamped to [0, 1]", () => {
    expect(parseJudgeReply('{"score": 0.75, "reasoning": "B should not see it"}')).toEqual({ score: 0.75, reasoning: "B should not see it" });
    expect(parseJudgeReply('Here:\n```json\n{"score": "0.5", "reasoning": "half"}\n```')).toEqual({ score: 0.5, reasoning: "half" });
    expect(parseJudgeReply('{"score": 1.4}')).toEqual({ score: 1, reasoning: "" });
    expect(parseJudgeReply('{"score": -2, "reasoning": "x"}').score).toBe(0);
    expect(() => parseJudgeReply("I think it is fine.")).toThrow("holds no JSON object");
    expect(() => parseJudgeReply('{"score": "high"}')).toThrow("score is not a number");
    expect(() => parseJudgeReply("{score: 1}")).toThrow("not valid JSON");

  });

  it("replaces the exact observation accuracy with the judge's score, keeps the exact one, and scores a failing judge 0", async () => {
    const pair = (fileId: string, gen: unknown): ContextPair => ({ fileId, gt: { raw: gt, source: "gt", meta: { question: "Where is A?" } }, gen: { json: gen, source: "gen" } });
    const seen: JudgeInput[] = [];
    // A judge that grades by whether B wrongly sees A enter, and cannot grade file "c".
    const judge: ContextJudge = {
      id: "rule judge",
      async judge(input) {
        seen.push(input);
        if (input.fileId === "c") throw new Error("endpoint down");
        return JSON.stringify(input.generated).includes("B: <same_as_state />") ? { score: 0.5, reasoning: "B sees it" } : { score: 1, reasoning: "right" };
      },
    };
    const wrong = { ...gt, socialized_context: [gt.socialized_context[0]!, { ...gt.socialized_context[1]!, observations: ["A: <same_as_state />", "B: <same_as_state />"] }] };
    const report = await evaluateContexts([pair("a", gt), pair("b", wrong), pair("c", gt)], { judge, concurrency: 2 });
    expect(report.observationSource).toBe("judge");
    expect(report.judge).toBe("rule judge");
    const [a, b, c] = report.results;
    expect(a).toMatchObject({ observationAccuracy: 1, overall: 1, judge: { score: 1 } });
    expect(b).toMatchObject({ observationAccuracy: 0.5, overall: 0.3 + 0.7 * 0.5, judge: { score: 0.5, reasoning: "B sees it" } });
    expect(b!.exact.accuracy).toBe(0.5);
    expect(c).toMatchObject({ observationAccuracy: 0, overall: 0.3, judge: { score: 0, error: "endpoint down", reasoning: "Error: endpoint down" } });
    expect(seen.map((s) => s.question)).toEqual(["Where is A?", "Where is A?", "Where is A?"]);
  });
});
