/** ToMi's questions answered by the world model (its labels), and their question types. */
import type { TomiQuestionType } from "./babi.js";
import type { TomiQuestion } from "./sentence.js";
import { beliefOf } from "../core/rooms.js";
import type { TomiState } from "./world.js";

/** The world model's answer after the story, or undefined when the world holds none. */
export function worldModelAnswer(state: TomiState, q: TomiQuestion): string | undefined {
  switch (q.kind) {
    case "reality":
      return state.objectContainer.get(q.object);
    case "memory":
      return state.initialContainer.get(q.object);
    case "first_order":
      return beliefOf(state, [q.agent], q.object);
    case "second_order":
      return beliefOf(state, [q.agent, q.other], q.object);
  }
}

/** The question type as ToMi names it: `_tom` when the answer differs from reality. */
export function questionType(q: TomiQuestion, answer: string | undefined, reality: string | undefined): TomiQuestionType {
  if (q.kind === "reality" || q.kind === "memory") return q.kind;
  const tom = answer !== reality;
  return `${q.kind}_${tom ? "tom" : "no_tom"}` as TomiQuestionType;
}
