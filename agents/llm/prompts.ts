/**
 * The messages the llm agent sends, built from prompt files (agents/llm/prompts/, worlds/question/prompts/ and each world's prompts/):
 *
 * - a benchmark question in vanilla mode: the benchmark's own prompt (story and question);
 * - in simulation mode, first `socialized-context.txt` (the story, the world's rules from
 *   `context-rules-<benchmark>.txt`, the context's JSON schema), then `simulation-answer.txt`
 *   (the context the model wrote and the question);
 * - any other world's turn: `llm-turn.txt` (who the agent is, what it perceives, what it can do);
 * - with structured output, a system message from `llm-format.txt` carrying the JSON schema;
 *   an answer with a text pattern of its own (usersim's tagged reply), `llm-pattern.txt` after it
 *   (no endpoint here takes a regular expression as its grammar: the pattern is guidance, and
 *   checked on the reply);
 * - a repair: the reply and `llm-repair.txt` with the reason it could not be used.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AgentTurn } from "../../worlds/core/agent.js";
import { fill, packageRoot, promptTemplate, simulationAnswerText } from "../../worlds/question/prompts.js";
import type { SocializedContext } from "../../worlds/core/socialized-context.js";
import type { QuestionTask } from "../../worlds/question/world.js";
import type { ChatMessage } from "./client.js";

/** The format instruction for a JSON schema ("" when the reply is plain text). */
export function formatInstruction(schema: Record<string, unknown> | undefined): string {
  return schema ? fill(promptTemplate("agents/llm/prompts/llm-format.txt"), { schema: JSON.stringify(schema) }) : "";
}

/** The instruction that an answer's text match `pattern` (a task's `pattern` AnswerForm). */
export function patternInstruction(pattern: string): string {
  return fill(promptTemplate("agents/llm/prompts/llm-pattern.txt"), { pattern });
}

/** System message(s): the user's own, then the format instruction. */
export function systemMessages(system: string | undefined, format: string): ChatMessage[] {
  const text = [system?.trim(), format].filter(Boolean).join("\n\n");
  return text ? [{ role: "system", content: text }] : [];
}

/** The conversation continued by a repair request. */
export function repairMessages(messages: readonly ChatMessage[], reply: string, error: string, format: string): ChatMessage[] {
  return [...messages, { role: "assistant", content: reply }, { role: "user", content: fill(promptTemplate("agents/llm/prompts/llm-repair.txt"), { error, format }) }];
}

/** The user message of an ordinary world's turn. */
export function turnPrompt(turn: AgentTurn): string {
  const options = turn.options?.length
    ? `\nActions possible now:\n${turn.options
        .slice(0, 50)
        .map((o) => `- ${JSON.stringify(o)}`)
        .join("\n")}${turn.options.length > 50 ? `\n- ... (${turn.options.length - 50} more)` : ""}\n`
    : "";
  return fill(promptTemplate("agents/llm/prompts/llm-turn.txt"), {
    agent: turn.agent,
    world: turn.world,
    timestep: String(turn.timestep),
    observation: turn.observation.text.trim() || "nothing",
    options,
  });
}

/** The benchmark's rules for writing a context (empty for a world without a rules file). */
export function worldRules(benchmark: string): string {
  if (!/^[a-z0-9-]+$/.test(benchmark)) return "";
  const path = `worlds/${benchmark}/prompts/context-rules-${benchmark}.txt`;
  return existsSync(join(packageRoot(), path)) ? promptTemplate(path).trimEnd() : "";
}

/** Simulation mode, step 1: write the story's socialized context. */
export function contextPrompt(task: QuestionTask, schema: Record<string, unknown>): string {
  return fill(promptTemplate("worlds/question/prompts/socialized-context.txt"), { world_rules: worldRules(task.benchmark), schema: JSON.stringify(schema), story: task.story });
}

/** Simulation mode, step 2: answer from the context. */
export function simulationAnswerPrompt(task: QuestionTask, context: SocializedContext | unknown): string {
  // One line of JSON: a long conversation's context costs half the tokens it would indented.
  return simulationAnswerText(task, JSON.stringify(isContext(context) ? { agents_names: context.agents_names, socialized_context: context.socialized_context } : context));
}

function isContext(c: unknown): c is SocializedContext {
  return !!c && typeof c === "object" && Array.isArray((c as SocializedContext).agents_names) && Array.isArray((c as SocializedContext).socialized_context);
}
