/** Hi-ToM in a live room: a generated story, played by its script. */
import { Rng } from "../core/rng.js";
import type { Scenario, ScenarioFactory } from "../core/scenario.js";
import { castGroupScript } from "../core/script.js";
import { generateHitomStory } from "./generator.js";
import { hitomWorld } from "./replay.js";
import { renderSentence } from "./sentences.js";
import { buildHitomScenario, locateIn } from "./story.js";
import { initialHitomState } from "./world.js";

export const hitomScenarios: ScenarioFactory = {
  episodes: "stories",
  describe: "a generated Hi-ToM story (five agents, three rooms; they move objects, leave, and tell each other the truth or lies), played by its script",
  async create(seed) {
    const rng = Rng.seeded(`room:hitom:${seed}`);
    const deception = rng.chance(0.5);
    const length = rng.pick([1, 2, 3] as const);
    const story = await generateHitomStory(rng, { deception, length });
    const sentences = story.sentences.map((sentence, i) => ({ sentence, text: renderSentence(sentence), line: i + 1 }));
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
};
