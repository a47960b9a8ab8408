/**
 * ToMi (Le et al. 2019): rooms, containers, objects, and agents who enter, exit and move them;
 * questions about where each agent (and each agent thinks another) would look for an object.
 * The world's one entry point: what the rest of the program uses of it.
 */
import type { WorldEntry } from "../core/world-entry.js";
import { TomiBenchmark } from "./benchmark.js";
import { generateTomi } from "./generator.js";
import { tomiScenarios } from "./scenario.js";
import { tomiSolver } from "./solver.js";
import { tomiFacts } from "./leak-facts.js";
import { tomiQuestions } from "./episode-questions.js";
import { compactTomiContext } from "./compact-context.js";
import { writtenTomiContext } from "./written-context.js";

export const world: WorldEntry = {
  name: "tomi",
  title: "ToMi",
  scenario: tomiScenarios,
  generator: {
    describe: "ToMi stories: OUT.txt (bAbI) and OUT.trace, six questions per story",
    async generate(n, seed, out, onProgress) {
      const base = out.replace(/\.txt$/, "");
      const files = await generateTomi(n, seed, onProgress);
      return {
        data: `${base}.txt`,
        files: [
          { path: `${base}.trace`, text: files.trace },
          { path: `${base}.txt`, text: files.txt },
        ],
      };
    },
  },
  benchmark: { options: [], create: async () => new TomiBenchmark() },
  solver: tomiSolver,
  facts: tomiFacts,
  questions: tomiQuestions,
  compactContext: compactTomiContext,
  writtenContext: writtenTomiContext,
};

// For the terminal demo (cli/commands/demo.ts), which plays generated stories step by step, and
// for a new model's default tokenizer corpus (models/from-scratch.ts), and for the learning
// recipe's varied training stories (measurements/learn-demo.ts), and for how much of a file's
// wording another holds (measurements/wording-coverage.ts).
export { generateTomi, generateTomiStory, type TomiVariations } from "./generator.js";
export { questionSubset } from "./question-subset.js";
export { replayTomi } from "./replay.js";
export { parseSentence, renderSentence } from "./sentences.js";
export type { TomiSentence } from "./sentence.js";
export { buildScenario } from "./story.js";
// For the self-play measurements' by-type columns (measurements/belief-discrimination.ts).
export type { TomiQuestionType } from "./babi.js";
