/**
 * FANToM in a live room: a generated conversation as the benchmark reads one: the generated text,
 * who is present at each line (inferred from the text, as for the official data), and the missed
 * fact carried by the lines that state it, so the room shows who comes to know it.
 */
import { Rng } from "../core/rng.js";
import type { Scenario, ScenarioFactory } from "../core/scenario.js";
import { castScript } from "../core/script.js";
import { inferPresence, parseContext } from "./conversation.js";
import { generateConversation } from "./generator.js";
import { locateByLanguage } from "./locate.js";
import { fantomWorld } from "./replay.js";
import { initialFantomState, type FantomAction } from "./world.js";

export const fantomScenarios: ScenarioFactory = {
  episodes: "conversations",
  describe: "a generated multi-party conversation (characters leave, come back and miss what was said), played by its script",
  async create(seed) {
    return fantomScenario(seed);
  },
};

function fantomScenario(seed: number): Scenario {
  const { sets } = generateConversation(Rng.seeded(`room:fantom:${seed}`), seed);
  const set = sets[sets.length - 1]!;
  const where = `fantom conversation ${seed}`;
  const utterances = parseContext(set.full_context, where, "full_context");
  const located = locateByLanguage(utterances, set.factQA.question);
  const fact = "missed";
  const presence = inferPresence(utterances, {
    ...(set.joining_speaker !== undefined ? { joiningSpeaker: set.joining_speaker } : {}),
    facts: new Map((located?.lines ?? []).map((i) => [i, [fact]])),
  });
  const initialState = initialFantomState({
    characters: presence.characters,
    present: presence.initiallyPresent,
    facts: { [fact]: located?.statement ?? set.factQA.correct_answer },
  });
  const script = presence.steps.map((s) => ({ actor: s.actor, action: s.action as FantomAction }));
  const { agents, director } = castScript(fantomWorld, initialState, script);
  return {
    world: fantomWorld,
    title: `FANToM: a conversation in which ${set.joining_speaker ?? "someone"} misses something`,
    initialState,
    director,
    scripted: agents,
    maxSteps: script.length + 1,
  } as Scenario;
}
