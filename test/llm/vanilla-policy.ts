/**
 * The policy most llm tests serve: trained on the agent's own vanilla requests for the two ToMi
 * questions: it answers the first in JSON; it answers the second in prose (unreadable), and,
 * asked to repair, in JSON.
 */
import type { QuestionTask } from "../../worlds/question/world.js";
import { answerConversation, repairConversation, tomiCase, trainedPolicy, type StoryCase } from "./fixtures.js";

export const FIRST_REPLY = '{"answer": "box"}';
export const PROSE_REPLY = "The apple is in the crate.";
export const REPAIRED_REPLY = '{"answer": "crate"}';

export interface VanillaPolicy {
  readonly dir: string;
  readonly story: StoryCase;
  readonly q1: QuestionTask;
  readonly q2: QuestionTask;
}

export async function vanillaPolicy(): Promise<VanillaPolicy> {
  const story = await tomiCase("vanilla");
  const [q1, q2] = story.tasks as [QuestionTask, QuestionTask];
  const dir = await trainedPolicy([answerConversation(q1, FIRST_REPLY), repairConversation(q2, PROSE_REPLY, REPAIRED_REPLY)], { seed: 3, steps: 70, positions: 512 });
  return { dir, story, q1, q2 };
}
