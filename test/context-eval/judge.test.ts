/** The LLM judge's prompt, request and reply handling, and how the evaluation uses a judge (no endpoint is called). */
import { describe, expect, it } from "vitest";
import { evaluateContexts, type ContextPair } from "../../benchmarks/context-eval.js";
import { chatContent, judgePrompt, judgeRequest, parseJudgeReply, type ContextJudge, type JudgeInput } from "../../benchmarks/context-eval/judge.js";

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

    const req = judgeRequest({ baseUrl: "http://localhost:8000/v1/", model: "m", apiKey: "k" }, prompt);
    expect(req.url).toBe("http://localhost:8000/v1/chat/completions");
    expect(req.init.headers.authorization).toBe("Bearer k");
    expect(JSON.parse(req.init.body)).toEqual({ model: "m", temperature: 0, messages: [{ role: "user", content: prompt }] });
    expect(judgeRequest({ baseUrl: "http://h/v1", model: "m" }, "p").init.headers.authorization).toBeUndefined();
  });

  it("reads replies as upstream does: JSON alone or inside text, the score clamped to [0, 1]", () => {
    expect(parseJudgeReply('{"score": 0.75, "reasoning": "B should not see it"}')).toEqual({ score: 0.75, reasoning: "B should not see it" });
    expect(parseJudgeReply('Here:\n```json\n{"score": "0.5", "reasoning": "half"}\n```')).toEqual({ score: 0.5, reasoning: "half" });
    expect(parseJudgeReply('{"score": 1.4}')).toEqual({ score: 1, reasoning: "" });
    expect(parseJudgeReply('{"score": -2, "reasoning": "x"}').score).toBe(0);
    expect(() => parseJudgeReply("I think it is fine.")).toThrow("holds no JSON object");
    expect(() => parseJudgeReply('{"score": "high"}')).toThrow("score is not a number");
    expect(() => parseJudgeReply("{score: 1}")).toThrow("not valid JSON");

    const ok = JSON.stringify({ id: "x", choices: [{ index: 0, message: { role: "assistant", content: '{"score": 0.9, "reasoning": "ok"}' } }] });
    expect(chatContent("u", 200, ok)).toBe('{"score": 0.9, "reasoning": "ok"}');
    expect(() => chatContent("u", 429, "rate limited")).toThrow("u: HTTP 429: rate limited");
    expect(() => chatContent("u", 200, "<html>")).toThrow("u: the reply is not JSON");
    expect(() => chatContent("u", 200, '{"choices": []}')).toThrow("u: not a chat completion");
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
