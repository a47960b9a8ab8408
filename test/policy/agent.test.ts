/**
 * The whole loop on the project's own data: a benchmark run logs episodes, SFT trains a policy on
 * the logged turns, and the policy (native engine, then its ONNX export) answers the benchmark
 * through the game loop as an agent.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { checkAgentSpec, loadAgent } from "../../agents/registry.js";
import { parseAction } from "../../agents/policy/action.js";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { AnswerSchema } from "../../worlds/question/world.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { tempDir } from "./fixtures.js";

const io = captureOutput();

describe("policy agents", () => {
  it("learn a benchmark from its logged episodes and answer it through the game loop", async () => {
    const dir = tempDir("sw-agent-");
    const files = await generateTomi(6, 3);
    writeFileSync(join(dir, "q.txt"), files.txt);
    writeFileSync(join(dir, "q.trace"), files.trace);
    const store = join(dir, "store");
    expect(await main(["bench", "tomi", "--data", join(dir, "q.txt"), "--agent", "simulation", "--store", store, "--quiet"])).toBe(0);
    const [runId] = readdirSync(join(store, "runs"));
    const episodes = join(store, "runs", runId!, "episodes.jsonl");

    const model = join(dir, "policy");
    expect(await main(["train", "sft", "--init", "tiny", "--data", episodes, "--out", model, "--steps", "120", "--lr", "3e-3", "--batch", "6", "--warmup", "5", "--quiet"]), io.err).toBe(0);
    expect(io.out).toMatch(/trained 120 steps on 6 examples: final loss 0\.0\d/);

    io.out = "";
    expect(await main(["bench", "tomi", "--data", join(dir, "q.txt"), "--agent", `policy:${model}?max_new_tokens=16`, "--store", store, "--json", join(dir, "r.json"), "--quiet"])).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "r.json"), "utf8"))).toMatchObject({ agent: `policy:${model}?max_new_tokens=16`, total: 6, correct: 6 });
    const runs = readdirSync(join(store, "runs")).filter((r) => r !== runId);
    const log = readEpisodeLog<{ turns: { prompt: string; raw: string; info: { finishReason: string } }[] }>(join(store, "runs", runs[0]!, "episodes.jsonl"));
    const turn = log.records[0]!.turns[0]!;
    expect(turn.prompt).toMatch(/^<\|im_start\|>user\n[\s\S]*<\|im_end\|>\n<\|im_start\|>assistant\n$/);
    expect(turn.info.finishReason).toBe("stop_token");

    expect(await main(["model", "export-onnx", model])).toBe(0);
    io.out = "";
    expect(await main(["bench", "tomi", "--data", join(dir, "q.txt"), "--agent", `onnx:${model}?max_new_tokens=16&threads=1`, "--store", store, "--json", join(dir, "o.json"), "--quiet"])).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "o.json"), "utf8"))).toMatchObject({ total: 6, correct: 6 });
  });

  it("reads actions from JSON or, for single-field actions, from the bare text", () => {
    expect(parseAction('{"answer": "blue_box"}', AnswerSchema)).toEqual({ answer: "blue_box" });
    expect(parseAction("Sure: {\"answer\": \"x\"} done", AnswerSchema)).toEqual({ answer: "x" });
    expect(parseAction("  green_crate\n", AnswerSchema)).toEqual({ answer: "green_crate" });
  });

  it("say what is wrong with a spec: its shape when checked, its folder when loaded", async () => {
    for (const check of [(spec: string) => checkAgentSpec(spec), (spec: string) => loadAgent(spec)]) {
      const fails = async (spec: string, why: RegExp) => expect(async () => await check(spec)).rejects.toThrow(why);
      await fails("policy:", /needs a checkpoint folder/);
      await fails(`policy:${tempDir()}?temperature=-1`, /temperature/);
      await fails(`policy:${tempDir()}?colour=red`, /colour/);
      await fails("bogus:x", /unknown agent "bogus:x"/);
    }
    // Checking reads the spec only; the folder is read when the agent is made.
    expect(() => checkAgentSpec(`policy:${join(tempDir(), "none")}`)).not.toThrow();
    await expect(loadAgent(`policy:${join(tempDir(), "none")}`)).rejects.toThrow(/not a checkpoint folder/);
  });
});
