/**
 * Soft-thinking decoding for the `policy:` agent (`soft_thinking=K&tau=X`): the options and their
 * errors, and the agent's completions against the SofT-GRPO trainer's rollouts (the same engine
 * path: the same seed gives the same soft tokens and the same reply).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkAgentSpec, loadAgent } from "../../agents/registry.js";
import { parseAgentTarget, softThinkingOf } from "../../agents/policy/options.js";
import { AgentSpecError } from "../../agents/agent-spec-error.js";
import type { AgentReply } from "../../worlds/core/agent.js";
import { NativeCompleter } from "../../models/generate.js";
import { completeSoft } from "../../trainers/grpo/soft-completer.js";
import { tinyCheckpoint } from "./fixtures.js";

describe("soft thinking at evaluation", () => {
  it("reads soft_thinking, tau and soft_top_p, drawing soft tokens at temperature 1 unless told", () => {
    const { options } = parseAgentTarget("policy:d?soft_thinking=4&tau=0.5", "d?soft_thinking=4&tau=0.5");
    expect(options.temperature).toBe(1);
    expect(softThinkingOf(options)).toEqual({ steps: 4, tau: 0.5, topP: 0.9 });
    const told = parseAgentTarget("p", "d?soft_thinking=2&soft_top_p=0.5&temperature=0.7").options;
    expect(softThinkingOf(told)).toEqual({ steps: 2, tau: 1, topP: 0.5 });
    expect(told.temperature).toBe(0.7);
    expect(softThinkingOf(parseAgentTarget("p", "d").options)).toBeUndefined();
    expect(parseAgentTarget("p", "d").options.temperature).toBe(0);
    const bad: [string, RegExp][] = [
      ["d?soft_thinking=4&temperature=0", /soft_thinking needs a positive temperature/],
      ["d?tau=0.5", /tau is a setting of soft thinking: add soft_thinking=K/],
      ["d?soft_top_p=0.5", /soft_top_p is a setting of soft thinking/],
      ["d?soft_thinking=0", /soft_thinking/],
      ["d?soft_thinking=2&tau=0", /tau/],
    ];
    for (const [target, re] of bad) expect(() => parseAgentTarget(`policy:${target}`, target), target).toThrow(re);
    expect(() => checkAgentSpec("onnx:d?soft_thinking=2")).toThrow(new AgentSpecError("onnx:d?soft_thinking=2: soft_thinking runs on the native engine (policy:DIR), not on onnxruntime"));
    expect(() => checkAgentSpec("policy:d?soft_thinking=2")).not.toThrow();
  });

  it("thinks as the SofT-GRPO rollouts think: the same soft tokens and reply for the same seed", async () => {
    const ck = await tinyCheckpoint(5);
    const completer = new NativeCompleter("t", ck.model, ck.tokenizer);
    const prompts = ["Where is the spinach?", "Who exited the garage?"].map((q) => ck.tokenizer.applyChatTemplate([{ role: "user", content: q }], { addGenerationPrompt: true }));
    const ids = prompts.map((p) => ck.tokenizer.encode(p));
    const seeds = [11, 12];
    const settings = { maxNewTokens: 6, temperature: 1, topK: 0, topP: 1, thinkingSteps: 3, tau: 0.7 };
    const rollouts = await completeSoft(ck.model, ck.tokenizer, ids, { ...settings, topP: 0.9 }, seeds);
    const mine = await completer.complete(prompts, { maxNewTokens: 6, temperature: 1, topP: 0.9, softThinking: { steps: 3, tau: 0.7, topP: 0.9 } }, seeds);
    for (let i = 0; i < 2; i++) {
      expect(mine[i]!.tokens).toEqual(rollouts[i]!.tokens);
      expect(mine[i]!.logprobs).toEqual(rollouts[i]!.logprobs);
      expect(mine[i]!.thinking).toBe(ck.tokenizer.decode(Array.from(rollouts[i]!.soft.argmax)));
    }
    // Without soft thinking the same seeds decode another reply (the thinking is what changed).
    const plain = await completer.complete(prompts, { maxNewTokens: 6, temperature: 1, topP: 0.9 }, seeds);
    expect(plain[0]!.thinking).toBeUndefined();
    expect(plain.map((c) => c.tokens)).not.toEqual(mine.map((c) => c.tokens));

    // Through the agent: the thinking is logged, and the same seed repeats the turn.
    const spec = `policy:${ck.dir}?soft_thinking=3&tau=0.7&max_new_tokens=6&constrain=off&seed=4`;
    const agent = await loadAgent(spec);
    const turn = { world: "w", agent: "a", timestep: 0, observation: { text: "Where is the spinach?" }, actionSchema: z.object({ answer: z.string() }) };
    // An untrained model's reply need not be an action: the log keeps it either way (AgentFailure's partial reply).
    const act = () => Promise.resolve(agent.act(turn)).catch((e: { partial: AgentReply }) => e.partial);
    const [a, b] = [await act(), await act()];
    expect(typeof a.info!.thinking).toBe("string");
    expect(a.raw).toBe(b.raw);
    expect(a.info!.thinking).toBe(b.info!.thinking);
  });
});
