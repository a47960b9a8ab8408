/**
 * ToMi's story types read off the world model's beliefs at the end of a story. ToMi's README
 * defines them: `true_belief`, "all agents observed all actions"; `false_belief`, "an agent failed
 * to observe an action"; `second_order_false_belief`, "an agent has a false belief about another
 * agent's set of beliefs". What a story's questions test is where the two agents asked about end:
 *
 * - second_order_false_belief: one of them knows where the object is but is wrong about where the
 *   other thinks it is (the other saw the object while the first was away). A wrong picture of
 *   the other held by an agent who is itself wrong about the object is a consequence of its own
 *   false belief, not a second-order one.
 * - false_belief: otherwise, one of them believes the object is where it is not.
 * - true_belief: both know where the object is, and where the other thinks it is.
 *
 * The official generator (facebookresearch/ToMi `tomi/story.py` line 89) labels a story
 * false_belief when the move is its second event, and second_order_false_belief when the mover
 * leaves before the last re-entry (line 107); stories where the one who missed the move never
 * comes back after it, or comes back while the mover watches, get the wrong type that way.
 */
import type { TomiStoryType } from "./babi.js";
import { beliefOf } from "../core/rooms.js";
import type { TomiState } from "./world.js";

export function storyTypeOf(state: Pick<TomiState, "beliefs" | "objectContainer">, agents: readonly [string, string], object: string): TomiStoryType {
  const reality = state.objectContainer.get(object);
  const [a, b] = agents;
  const knows = (x: string) => beliefOf(state, [x], object) === reality;
  const misjudges = (x: string, y: string) => beliefOf(state, [x, y], object) !== beliefOf(state, [y], object);
  if ((knows(a) && misjudges(a, b)) || (knows(b) && misjudges(b, a))) return "second_order_false_belief";
  if (!knows(a) || !knows(b)) return "false_belief";
  return "true_belief";
}
