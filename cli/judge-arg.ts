/**
 * `--judge llm:MODEL@BASE_URL[?options]`: the model a graded benchmark judges with (usersim's LLM
 * judge), made through agents/llm/ and loaded only when asked for. `bench` and `train grpo` take it.
 */
import { AgentSpecError } from "../agents/agent-spec-error.js";
import type { JudgeModel } from "../worlds/question/benchmark.js";
import { UsageError } from "./args.js";

export async function judgeModelArg(spec: string): Promise<JudgeModel> {
  const { llmJudgeModel } = await import("../agents/llm/judge-model.js");
  try {
    return llmJudgeModel(spec);
  } catch (err) {
    if (err instanceof AgentSpecError) throw new UsageError(`--judge: ${err.message}`);
    throw err;
  }
}
