/**
 * Between a world's actions and a language model's text: the prompt a policy sees for a turn,
 * and the action read back from what it wrote.
 */
import { z } from "zod";
import type { ChatMessage } from "../../models/chat-template.js";

/**
 * The conversation a policy answers: an optional system message, then what the turn shows it
 * (the observation's text, or the question asked over a socialized context in simulation mode).
 * The policy agent, the GRPO trainers and anything that scores them build their prompts here.
 */
export function turnMessages(text: string, system?: string): ChatMessage[] {
  return [...(system ? [{ role: "system" as const, content: system }] : []), { role: "user", content: text }];
}

/**
 * An action as a model should write it: the bare string when the action has a single string
 * field (`{"answer": "box"}` is written `box`), else its JSON.
 */
export function actionText(action: unknown): string {
  if (typeof action === "string") return action;
  if (action && typeof action === "object" && !Array.isArray(action)) {
    const values = Object.values(action);
    if (values.length === 1 && typeof values[0] === "string") return values[0];
  }
  return JSON.stringify(action);
}

/**
 * Reads an action from a model's text: JSON that the schema accepts; else, for an action with a
 * single string field, the trimmed text as that field. Throws when neither fits (the game loop
 * then logs the error and uses its fallback).
 */
export function parseAction<A>(text: string, schema: z.ZodType<A>): A {
  const trimmed = text.trim();
  for (const candidate of [trimmed, trimmed.match(/\{[\s\S]*\}/)?.[0]]) {
    if (!candidate) continue;
    try {
      const r = schema.safeParse(JSON.parse(candidate));
      if (r.success) return r.data;
    } catch {
      // not JSON
    }
  }
  if (schema instanceof z.ZodObject) {
    const keys = Object.keys(schema.shape);
    if (keys.length === 1) {
      const r = schema.safeParse({ [keys[0]!]: trimmed });
      if (r.success) return r.data as A;
    }
  }
  const s = schema.safeParse(trimmed);
  if (s.success) return s.data;
  throw new Error(`could not read an action from the model's output: ${JSON.stringify(trimmed.slice(0, 200))}`);
}
