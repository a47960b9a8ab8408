/**
 * How events change nested beliefs in the Hi-ToM world. The world runs on `HITOM_RULES`; the other
 * settings reproduce known errors of the benchmark's generator, so a disputed official label can
 * be traced to the error that produced it (benchmark.ts), and the claim rule can be
 * measured against its alternatives (test/hitom/official-data.test.ts).
 *
 * The claim rule. The benchmark states that agents lie, that what an agent says does not change
 * its own belief, that an agent trusts one who exited the room later than itself, and that the
 * exit order is known to all. It does not say what others believe about a trusted claim. On the
 * dev slice the labels fit "hearer" best: a claim changes only the minds of the hearers who trust
 * the speaker, each now believing the claim and believing that the speaker believes it; nobody's
 * picture of anybody else changes (CoTP deception questions: 56/60 agree, against 48/60 when
 * everyone present knows, to depth 4, who believed the speaker).
 */
export interface HitomRules {
  /**
   * Which chains of witnesses a move updates: "all" (every chain of distinct witnesses: they saw
   * it together, so it is common knowledge among them) or "listed" (only chains that follow the
   * order in which the witnesses came in, the mover last: the upstream generator's
   * `itertools.combinations` where permutations are needed).
   */
  readonly moveChains: "all" | "listed";
  /** Whether entering a room shows the objects in it (true), or only what a sentence names. */
  readonly seeOnEnter: boolean;
  /** What a claim changes: "hearer" (see above) or "common" (common knowledge of who believes it). */
  readonly claims: "hearer" | "common";
}

export const HITOM_RULES: HitomRules = Object.freeze({ moveChains: "all", seeOnEnter: true, claims: "hearer" });
