/**
 * An untrained tiny policy (its word tokenizer built from the prompt and the world model's reply)
 * asked a simulation-mode question with a `context` it writes itself: the written-context tests of
 * each world check that what it writes keeps to the grammar.
 */
import { LanguageModelAgent } from "../../agents/policy/lm-agent.js";
import { LmAgentOptionsSchema, type ContextSource } from "../../agents/policy/options.js";
import type { AskedQuestion } from "../../agents/policy/question-prompt.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { NativeCompleter } from "../../models/generate.js";
import type { AgentReply } from "../../worlds/core/agent.js";
import { writtenReply } from "../../worlds/core/written-context.js";
import { QuestionWorld, type QuestionTask } from "../../worlds/question/world.js";

/** A function that asks the policy the task once more (timestep t) and gives its reply. */
export async function untrainedWriter(task: QuestionTask, asked: AskedQuestion, context: ContextSource): Promise<(t: number) => Promise<AgentReply>> {
  const m = await createFromScratch({ preset: "tiny", seed: 4, corpus: [asked.text, writtenReply(asked.written!)!], tokenizerKind: "word" });
  const completer = new NativeCompleter("tiny", m.model, m.tokenizer);
  const agent = new LanguageModelAgent("policy:tiny", async () => ({ completer, tokenizer: m.tokenizer }), LmAgentOptionsSchema.parse({ temperature: 1, context }));
  const world = new QuestionWorld(() => 0);
  return async (t) => agent.act({ world: "question", agent: "respondent", timestep: t, observation: world.observe(QuestionWorld.initial(task)), actionSchema: world.actionSchema() });
}
