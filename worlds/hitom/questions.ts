/** Hi-ToM's questions answered by the world model (its labels). */
import type { HitomQuestion } from "./sentences.js";
import { beliefOf } from "../core/rooms.js";
import type { HitomState } from "./world.js";

/** The order of a question: 0 for reality, k for k nested agents. */
export function orderOf(q: HitomQuestion): number {
  return q.agents.length;
}

/** The world model's answer after the story, or undefined when the world holds none. */
export function worldModelAnswer(state: HitomState, q: HitomQuestion): string | undefined {
  if (q.agents.length === 0) return state.objectContainer.get(q.object);
  return beliefOf(state, q.agents, q.object);
}
