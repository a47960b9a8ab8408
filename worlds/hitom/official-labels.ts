/**
 * How Hi-ToM's released labels were made, read from upstream's history
 * (github.com/ying-hui-he/Hi-ToM_dataset), and which label each entry is scored against.
 *
 * - The stories and labels were generated on 2023-06-09 (commit 422f5cb) by the generator of that
 *   day, whose belief updates `HITOM_RELEASE_RULES` reproduce (rules.ts). `generate_tasks.py`
 *   writes both prompting styles of a question from one story (lines 48-74: `for mode in modes`
 *   over one `story`), so the CoT file and the MC (VP) file carried the same label. Replayed
 *   through that day's `dynamic_actions.py` and `oracle.py`, the 600 stories give all 600 VP labels.
 * - Upstream fixed the generator three days later (9117f35 "fix permutation bug"), but did not
 *   release a new run: on 2023-06-13 it changed 140 answer lines of the CoT files by hand (7999d716
 *   "Updated correct data"; 50242d0 "clean dataset" reverted two). Of the 138 CoTP labels that
 *   differ from the generated ones, 125 are what the fixed generator gives; 13 are labels no
 *   version of the generator gives (a container of another object, a chapter's re-entry ignored).
 *   The MC files were not edited: that is why 138 VP labels differ from their CoTP twin's.
 * - Upstream's evaluator reads the label of either prompting style from the CoT file: GPT-4's
 *   accuracy in `GPT-4_analyze.ipynb` (cell 1, lines 28 and 40-41 at a139da2, the notebook's last
 *   version before 50242d0 removed it) loops over `prompts = ['CoT', 'MC']` and opens
 *   `os.path.join(answer_folder, tell, 'CoT', ...)` for both. A VP entry is therefore scored
 *   against the CoTP entry of the same question by default (`vpLabels: "cotp"`).
 */
import type { HitomEntry } from "./dataset.js";

export const HITOM_CAUSES = {
  ordered_combinations:
    "The label is the one upstream's generator wrote on 2023-06-09 (commit 422f5cb), when MoveAction (dynamic_actions.py lines " +
    "211-223) updated nested beliefs only for itertools.combinations of the witnesses, listed in the order they came in with the " +
    "mover appended last (line 205), where permutations are needed: the mover does not know that those who stay saw the move, " +
    "nor does a later-listed witness know it of an earlier-listed one. Upstream fixed this in 9117f35 (\"fix permutation bug\") " +
    "without regenerating the data. Replaying the story under that day's rules (HITOM_RELEASE_RULES) gives the label.",
  hand_edited:
    "The label is not the one upstream's generator wrote: replayed under the generator's rules of 2023-06-09 (HITOM_RELEASE_RULES) " +
    "the story gives the `generated` label, which generate_tasks.py (lines 48-74) wrote to the question's CoT and MC files alike " +
    "and the MC (VP) file still has. Upstream changed this CoT answer line by hand in 7999d716 (\"Updated correct data\", 140 CoT " +
    "answers edited), to a label that neither version of the generator, before or after its fix, gives.",
  no_world_model_answer: "The world model holds no answer (an asked agent never saw the object).",
  other: "No known rule of the generator, nor a known hand edit, explains the label.",
} as const;

export type HitomCause = keyof typeof HITOM_CAUSES;

/** Which label a VP entry is scored against: its CoTP twin's (upstream's evaluator) or its own. */
export type HitomVpLabels = "cotp" | "own";
export const HITOM_VP_LABELS: readonly HitomVpLabels[] = ["cotp", "own"];

/** One question about one story, whatever its prompting style (the story body without a VP instruction line). */
export function questionKey(body: string, question: string): string {
  return `${body}\n${question}`;
}

/** The CoTP label of every question a file has a CoTP entry for, by `questionKey`. */
export function cotpLabels(entries: Iterable<{ readonly body: string; readonly entry: HitomEntry }>): Map<string, string> {
  const out = new Map<string, string>();
  for (const { body, entry } of entries) if (entry.prompting_type === "CoTP") out.set(questionKey(body, entry.question), entry.answer);
  return out;
}

/**
 * Why the label an entry is scored against (`official`) is not the world model's. `generated` is
 * the world model's answer under HITOM_RELEASE_RULES (the label the generator wrote); `fromCot`
 * says whether `official` comes from a CoT file (a CoTP entry, or a VP entry scored against its
 * CoTP twin), the only files upstream edited by hand. Undefined when they agree.
 */
export function labelCause(a: {
  readonly official: string;
  readonly worldModel: string | undefined;
  readonly generated: string | undefined;
  readonly fromCot: boolean;
}): HitomCause | undefined {
  if (a.worldModel === a.official) return undefined;
  if (a.worldModel === undefined) return "no_world_model_answer";
  if (a.generated === a.official) return "ordered_combinations";
  // Written by the generator as `generated`, scored as something else: changed by hand afterwards.
  if (a.fromCot && a.generated !== undefined) return "hand_edited";
  return "other";
}
