/**
 * What a simulation room can play, by name: a world, its initial state, the environment's script
 * (a story's narrator), and the agent that plays each seat when no person does. Rooms are generic
 * over this; a world registers one factory here.
 */
import type { Agent } from "../../worlds/core/agent.js";
import { ScriptedAgent } from "../../worlds/core/scripted-agent.js";
import type { Director } from "../../worlds/core/loop.js";
import { Rng } from "../../worlds/core/rng.js";
import { castScript } from "../../worlds/core/script.js";
import type { World } from "../../worlds/core/world.js";
import { generateHitomStory } from "../../worlds/hitom/generator.js";
import { hitomWorld } from "../../worlds/hitom/replay.js";
import { buildHitomScenario, locateIn } from "../../worlds/hitom/story.js";
import { renderSentence as renderHitomSentence } from "../../worlds/hitom/sentences.js";
import { initialHitomState } from "../../worlds/hitom/world.js";
import { inferPresence, parseContext } from "../../worlds/fantom/conversation.js";
import { generateConversation } from "../../worlds/fantom/generator.js";
import { locateByLanguage } from "../../worlds/fantom/locate.js";
import { fantomWorld } from "../../worlds/fantom/replay.js";
import { initialFantomState, type FantomAction } from "../../worlds/fantom/world.js";
import { generateTomiStory } from "../../worlds/tomi/generator.js";
import { renderSentence } from "../../worlds/tomi/sentences.js";
import { buildScenario } from "../../worlds/tomi/story.js";
import { initialTomiState, TomiWorld } from "../../worlds/tomi/world.js";

export interface Scenario<S = unknown, A = unknown, X = unknown> {
  readonly world: World<S, A, X>;
  /** What this episode is ("ToMi: false belief story"). */
  readonly title: string;
  readonly initialState: S;
  readonly director?: Director<S, X>;
  /** The agent that plays each seat when nobody else does (a story's script). */
  readonly scripted: Readonly<Record<string, Agent<A>>>;
  readonly maxSteps?: number;
}

export interface ScenarioFactory {
  readonly title: string;
  /** What one episode is called in room titles ("stories", "conversations"). */
  readonly episodes: string;
  readonly describe: string;
  /** A new episode's scenario; the same seed gives the same scenario. */
  create(seed: number): Promise<Scenario>;
}

const tomiWorld = new TomiWorld();

export const SCENARIOS: Readonly<Record<string, ScenarioFactory>> = {
  tomi: {
    title: "ToMi",
    episodes: "stories",
    describe: "a generated ToMi story (rooms, containers, objects; agents enter, exit and move things), played by its script",
    async create(seed) {
      const story = await generateTomiStory(Rng.seeded(`room:tomi:${seed}`));
      const sentences = story.sentences.map((sentence, i) => ({ sentence, text: renderSentence(sentence), line: i + 1 }));
      const scenario = buildScenario(sentences, `tomi story ${seed}`);
      const initialState = initialTomiState(scenario.init);
      const { agents, director } = castScript(tomiWorld, initialState, scenario.script);
      return {
        world: tomiWorld,
        title: `ToMi: ${story.storyType.replace(/_/g, " ")} story`,
        initialState,
        director,
        scripted: agents,
        maxSteps: scenario.script.length + 1,
      } as Scenario;
    },
  },
  hitom: {
    title: "Hi-ToM",
    episodes: "stories",
    describe: "a generated Hi-ToM story (five agents, three rooms; they move objects, leave, and tell each other the truth or lies), played by its script",
    async create(seed) {
      const rng = Rng.seeded(`room:hitom:${seed}`);
      const deception = rng.chance(0.5);
      const length = rng.pick([1, 2, 3] as const);
      const story = await generateHitomStory(rng, { deception, length });
      const sentences = story.sentences.map((sentence, i) => ({ sentence, text: renderHitomSentence(sentence), line: i + 1 }));
      const scenario = buildHitomScenario(sentences, locateIn(`hitom story ${seed}`));
      const initialState = initialHitomState(scenario.init);
      const { agents, director } = castGroupScript(hitomWorld, initialState, scenario.script);
      return {
        world: hitomWorld,
        title: `Hi-ToM: ${length}-chapter story${deception ? " with deception" : ""}`,
        initialState,
        director,
        scripted: agents,
        maxSteps: scenario.script.length + 1,
      } as Scenario;
    },
  },
  fantom: {
    title: "FANToM",
    episodes: "conversations",
    describe: "a generated multi-party conversation (characters leave, come back and miss what was said), played by its script",
    async create(seed) {
      return fantomScenario(seed);
    },
  },
};

/**
 * A FANToM conversation as the benchmark reads one: the generated text, who is present at each
 * line (inferred from the text, as for the official data), and the missed fact carried by the
 * lines that state it, so the room shows who comes to know it.
 */
export function fantomScenario(seed: number): Scenario {
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

/**
 * A script whose steps may have several actors at once (a group enters together): one scripted
 * agent per character, and a director for the narrator's sentences.
 */
function castGroupScript<S, A, X>(
  world: World<S, A, X>,
  state: S,
  script: readonly { readonly actions?: Readonly<Record<string, A>>; readonly narration?: X }[],
): { agents: Record<string, Agent<A>>; director: Director<S, X> } {
  const byAgent = new Map<string, Map<number, A>>();
  script.forEach((step, i) => {
    for (const [agent, action] of Object.entries(step.actions ?? {})) {
      let m = byAgent.get(agent);
      if (!m) byAgent.set(agent, (m = new Map()));
      m.set(i + 1, action);
    }
  });
  const agents: Record<string, Agent<A>> = {};
  for (const name of world.agents(state)) agents[name] = new ScriptedAgent(byAgent.get(name) ?? new Map(), world.noop(state, name));
  return {
    agents,
    director: {
      exogenous: (_s, t) => {
        const n = script[t - 1]?.narration;
        return n === undefined ? [] : [n];
      },
      done: (_s, t) => t > script.length,
    },
  };
}
