/** ToMi in a live room: a generated story, played by its script. */
import { Rng } from "../core/rng.js";
import type { Scenario, ScenarioFactory } from "../core/scenario.js";
import { castScript } from "../core/script.js";
import { generateTomiStory } from "./generator.js";
import { tomiWorld } from "./replay.js";
import { renderSentence } from "./sentences.js";
import { buildScenario } from "./story.js";
import { initialTomiState } from "./world.js";

export const tomiScenarios: ScenarioFactory = {
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
};
