/**
 * The facts the short prompt's facts line can state besides what the screen shows, each declared
 * once: its key (the benchmark option and run parameter, and the flag `--KEY` of `bench`, `train
 * grpo`, the demos and the probe), what a title says of it, its help text and how it is stated.
 * Everything that takes the facts (the benchmark, GRPO's rollouts, the export, the measurement
 * scripts) reads this list, so a fact is added by adding its line here.
 *
 * Each fact must be something the user could perceive when they decided: their own mind (the
 * generator's latent block keeps it, as the socialized context's mental state says it) or what
 * their own screen showed them. A tree without a latent block (a real dump's) states none of them.
 */
import type { Latent, SocialTree } from "./format.js";
import { stanceWords } from "./population.js";
import type { SocialTask } from "./tasks.js";
import { SIDE_THRESHOLD, visibleSide } from "./text.js";

/** What a fact is stated from: the task, its post's topic and the user's decision in the latent block. */
export interface FactScene {
  readonly task: SocialTask;
  /** The asked item's text (the post's, or the depth-0 comment's or repost's). */
  readonly text: string;
  /** The post's topic: its index in TOPICS (-1 for a topic the vocabulary lacks) and its name. */
  readonly topic: { readonly key: string; readonly index: number; readonly name: string };
  /** The user's decision on the asked item, as the latent block records it (their mind then). */
  readonly mind: Latent["decisions"][number];
  /** The user's latent profile. */
  readonly self: Latent["users"][number] | undefined;
}

export interface SocialFact {
  /** The option's name and flag (`--stance`). */
  readonly key: string;
  /** What a benchmark's title says it states ("with the user's stance"). */
  readonly title: string;
  /** The flag's help text (after "with --context short: the facts line also states"). */
  readonly help: string;
  /** Its sentence in the facts line, or undefined when there is nothing to say. */
  state(scene: FactScene): string | undefined;
}

/**
 * The facts, in the order the line states them (after the topic's place among the user's
 * interests, before the user's earlier reactions).
 */
export const SOCIAL_FACTS = [
  {
    // The user's own mind: a policy would otherwise have to read it off the user's recent posts.
    key: "stance",
    title: "the user's stance",
    help: "the user's stance on the post's topic, from the generated trees' latent block (the user's own mind)",
    state: (s) => `Your stance on ${s.topic.name}: ${stanceWords(s.mind.stance)}.`,
  },
  {
    // The item's stance is latent, its claim is on the screen: the side its text shows, against
    // the user's own stance. The latent model chooses between agreeing (repost, like) and arguing
    // (comment) by the product of the two, which neither says alone.
    key: "agreement",
    title: "whether the item agrees",
    help: "whether the item takes the user's side (the side its text shows against the user's own stance)",
    state: (s) => agreementFact(s.text, s.topic.index, s.mind.stance),
  },
  {
    // How much the topic draws the user in, which the user knows of themselves; the profile line
    // names only their top two topics, and the latent model's chance to react moves 6 logits
    // across the interest's range (behavior.ts).
    key: "interest",
    title: "how much the topic interests the user",
    help: "how much the post's topic interests the user, in words (the user's own mind, from the latent block)",
    state: (s) => (s.self?.interests[s.topic.key] === undefined ? undefined : `It interests you ${interestWords(s.self.interests[s.topic.key]!)}.`),
  },
  {
    // How many other items of this cascade the user had weighed (decided whether to react to)
    // when they came to this one (their own feed's history: the world records who saw what). Each
    // lowers the chance to react by 1.5 logits (fatigue, behavior.ts); the earlier reactions the
    // line states count only those the user reacted to. Not "before": an item and its unseen
    // thread come on screen at once, weighed from the newest up (sim.ts's show), so a post that
    // came with a reply counts that reply, and a reply the post above it does not.
    key: "seen",
    title: "how many of the cascade's items the user had weighed",
    help: "how many other items of this cascade the user had weighed when they came to this one, counting any shown with it (their own feed's history)",
    state: (s) =>
      s.mind.earlier === 0
        ? "When you came to it, you had weighed no other item of this story."
        : `When you came to it, you had weighed ${s.mind.earlier} other item${s.mind.earlier === 1 ? "" : "s"} of this story, counting any shown with it.`,
  },
] as const satisfies readonly SocialFact[];

export type FactKey = (typeof SOCIAL_FACTS)[number]["key"];
export const FACT_KEYS: readonly FactKey[] = SOCIAL_FACTS.map((f) => f.key);

/** A fact's flag help: what the facts line then also states. */
export function factHelp(fact: SocialFact): string {
  return `with --context short: the facts line also states ${fact.help}`;
}

/** Why a fact is refused without the short prompt, after its flag: "--stance goes with --context short...". */
export const NEEDS_SHORT = "goes with --context short (a fact of the short prompt's facts line)";

/** The first fact of `facts` asked with a prompt other than the short one, whose facts line alone states them; undefined when none is. */
export function factWithoutShort(context: string | undefined, facts: { readonly [K in FactKey]?: boolean | undefined } | undefined): FactKey | undefined {
  return context === "short" ? undefined : FACT_KEYS.find((k) => facts?.[k]);
}

/** Which facts the facts line states besides the screen's (each of SOCIAL_FACTS, by key). */
export type FactsOptions = { readonly [K in FactKey]?: boolean };

/** The facts stated, for a title: "" or " with the user's stance", " with the user's stance and whether the item agrees"... */
export function factsTitle(opts: FactsOptions): string {
  const said = SOCIAL_FACTS.filter((f) => opts[f.key]).map((f) => f.title);
  if (said.length === 0) return "";
  return ` with ${said.length > 2 ? `${said.slice(0, -1).join(", ")} and ${said.at(-1)!}` : said.join(" and ")}`;
}

/** The sentences of the facts asked, in SOCIAL_FACTS' order; none for a tree without the user's decision in a latent block. */
export function factSentences(task: SocialTask, text: string, topic: FactScene["topic"], opts: FactsOptions): string[] {
  const asked = SOCIAL_FACTS.filter((f) => opts[f.key]);
  if (asked.length === 0) return [];
  const mind = task.tree.latent?.decisions.find((d) => d.user === task.user && d.parent === task.parent);
  if (!mind) return [];
  const scene: FactScene = { task, text, topic, mind, self: latentUser(task.tree, task.user) };
  return asked.flatMap((f) => f.state(scene) ?? []);
}

function latentUser(tree: SocialTree, id: string): Latent["users"][number] | undefined {
  return tree.latent?.users.find((u) => u.id === id);
}

/**
 * Whether a text agrees with a user of stance `stance` on `topic`: "It agrees with you." or "It
 * disagrees with you." when both take a side; "It takes no side." when the text shows none (so
 * whatever the user thinks); "You take no side." when the user is undecided (as the text's writer
 * is when they ask instead of claiming: |stance| under SIDE_THRESHOLD).
 */
export function agreementFact(text: string, topic: number, stance: number): string {
  const theirs = visibleSide(text, topic);
  if (theirs === undefined) return "It takes no side.";
  if (Math.abs(stance) < SIDE_THRESHOLD) return "You take no side.";
  return (stance > 0) === (theirs === "for") ? "It agrees with you." : "It disagrees with you.";
}

/**
 * Words for an interest in [0, 1]. The generator draws a user's two focus topics' interests in
 * [0.45, 1] and the others' in [0, 0.25] (network.ts): the focus range is cut in three, the rest
 * in two.
 */
export function interestWords(x: number): string {
  if (x >= 0.82) return "very much";
  if (x >= 0.63) return "much";
  if (x >= 0.45) return "somewhat";
  if (x >= 0.12) return "a little";
  return "hardly";
}
