/**
 * Hi-ToM (He, Wu et al. 2023): agents move objects between rooms' containers, leave, then tell
 * each other where things are, truthfully or not; questions of orders 0 to 4.
 * The world's one entry point: what the rest of the program uses of it.
 */
import type { WorldEntry } from "../core/world-entry.js";
import { HitomBenchmark } from "./benchmark.js";
import { generateHitom } from "./generator.js";
import { hitomScenarios } from "./scenario.js";
import { hitomSolver } from "./solver.js";
import { hitomFacts } from "./leak-facts.js";
import { hitomQuestions } from "./episode-questions.js";
import { compactHitomContext } from "./compact-context.js";
import { writtenHitomContext } from "./written-context.js";

export const world: WorldEntry = {
  name: "hitom",
  title: "Hi-ToM",
  scenario: hitomScenarios,
  generator: {
    describe: "Hi-ToM questions in the upstream Hi-ToM_data.json layout (CoTP), five per story (orders 0-4)",
    async generate(n, seed, out, onProgress) {
      const gen = await generateHitom(n, seed, onProgress && ((done) => onProgress(Math.min(done, n))));
      return { data: out, files: [{ path: out, text: gen.json }] };
    },
  },
  benchmark: { options: ["vpLabels"], create: async (opts) => new HitomBenchmark(opts) },
  solver: hitomSolver,
  facts: hitomFacts,
  questions: hitomQuestions,
  compactContext: compactHitomContext,
  writtenContext: writtenHitomContext,
};

export { generateHitom } from "./generator.js";
