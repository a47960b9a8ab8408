/**
 * How events change nested beliefs in the Hi-ToM world. The world runs on `HITOM_RULES`, the
 * belief updates of upstream's generator (ying-hui-he/Hi-ToM_dataset, `dynamic_actions.py` at its
 * last version, 56dda76): replayed through that code, every one of the 1,200 released stories gets
 * the world model's label. `HITOM_RELEASE_RULES` are the updates of the generator as it was when
 * the released data was generated (commit 422f5cb, before upstream's own fix): they reproduce every
 * generated label (official-labels.ts says which labels were changed by hand afterwards). The other
 * settings are measured alternatives (test/hitom/official-data.test.ts).
 *
 * The claim rule. The benchmark states that agents lie, that what an agent says does not change
 * its own belief, that an agent trusts one who exited the room later than itself, and that the
 * exit order is known to all. It does not say what others believe about a trusted claim. The
 * generator (`PublicTellAction`, `PrivateTellAction`; lines below at 56dda76) changes only the
 * hearers who trust the speaker, each now believing the claim and believing that the speaker
 * believes it (lines 262-264, 291-293); and the speaker, "who would think his words are trusted",
 * now believes that every hearer believes the claim (lines 265, 267-268, 294). Nobody else's picture
 * of anybody changes ("hearer"). On the dev slice the labels fit this best: 56/60 CoTP deception
 * questions agree, against 48/60 when everyone present knows, to depth 4, who believed the speaker.
 */
export interface HitomRules {
  /**
   * Which chains of witnesses a move updates: "all" (every chain of distinct witnesses: they saw
   * it together, so it is common knowledge among them; upstream's `MoveAction` since commit 9117f35
   * "fix permutation bug", lines 218-238: `permutations` of every `combinations` of witnesses) or
   * "listed" (only chains that follow the order in which the witnesses came in, the mover last:
   * `MoveAction` at 422f5cb, lines 211-223, takes `itertools.combinations(observers, k)` of
   * `observers` = the chapter's later agents then the mover, appended at line 205, where
   * permutations are needed). The released data was generated with "listed".
   */
  readonly moveChains: "all" | "listed";
  /**
   * Whether entering a room shows the objects in it (true: upstream's `EnterAction`, lines 319-348,
   * sets every entering agent's beliefs about every object in the room's containers, including
   * objects the story does not name), or only what a sentence names (false: how upstream's hand
   * edits of two released labels read the story; official-labels.ts).
   */
  readonly seeOnEnter: boolean;
  /** What a claim changes: "hearer" (see above) or "common" (common knowledge of who believes it). */
  readonly claims: "hearer" | "common";
  /**
   * Whether the speaker of a claim then believes that each hearer believes it, trusting or not
   * (upstream's `PublicTellAction` lines 265 and 267-268, `PrivateTellAction` line 294: "speaker
   * would think his words are trusted"). Without it, the released labels of 6 questions (12
   * entries) of the 1,200 disagree with the world model ("Where does Sophia think Logan thinks
   * the asparagus is?" after Sophia's public claim).
   */
  readonly speakerThinksBelieved: boolean;
}

export const HITOM_RULES: HitomRules = Object.freeze({ moveChains: "all", seeOnEnter: true, claims: "hearer", speakerThinksBelieved: true });

/** The generator's rules when it wrote the released labels (upstream commit 422f5cb, 2023-06-09). */
export const HITOM_RELEASE_RULES: HitomRules = Object.freeze({ ...HITOM_RULES, moveChains: "listed" });
