/**
 * Socialized contexts (the SAP layout, worlds/core/socialized-context.ts) of a tree's questions,
 * one timestep per item of the chain the question is about:
 *
 *   Timestep 1: state none; Lin posts: "...".
 *   Timestep 2: state [p0] Lin posted: "..."; seen by Wei and by those asked; Wei comments on p0: "...".
 *   Timestep 3: state [p0] ... [c3] ...; seen by those asked; each of them acts on c3 (ground truth).
 *   Timestep 4: the state with their reactions; every action none.
 *
 * Whoever reacted to an item saw it and what it answers (a screen shows an item with its
 * ancestors), so the authors of the chain see the items before theirs, and the users asked about
 * the last item see the whole chain.
 *
 * - `visibleContext` is what the asked user saw, without what they did (the simulation agent's
 *   context in simulation mode, from what a model's prompt shows; nothing latent in it);
 * - `groundTruthContext` is the episode of an item: every user asked about it, each with the
 *   reaction the file gives, and with the generator's latent block, their mental state when
 *   deciding (what they noticed, their stance on the topic then).
 */
import { agentLine, NONE, SAME_AS_STATE, type SocializedContext } from "../core/socialized-context.js";
import { describeAction, type ReactionAction } from "./action.js";
import type { SocialTree } from "./format.js";
import { stanceWords } from "./population.js";
import { chain, itemLine, nameOf } from "./prompts.js";
import type { SocialTask } from "./tasks.js";
import { TOPICS } from "./vocabulary.js";

interface Asked {
  readonly user: string;
  /** Absent: the context stops before they act. */
  readonly action?: ReactionAction;
  readonly mentalState?: string;
}

function authorOf(tree: SocialTree, id: string): string {
  return id === tree.post.id ? tree.post.user : tree.interactions.find((x) => x.id === id)!.user;
}

/** How the author of chain item `id` wrote it, as an action line. */
function writing(tree: SocialTree, id: string): string {
  if (id === tree.post.id) return `posts: ${JSON.stringify(tree.post.text)}`;
  const x = tree.interactions.find((i) => i.id === id)!;
  const a: ReactionAction = x.type === "comment" ? { action: "comment", target: x.parent, content: x.text } : x.text ? { action: "repost", target: x.parent, content: x.text } : { action: "repost", target: x.parent };
  return describeAction(a);
}

function build(tree: SocialTree, parent: string, asked: readonly Asked[]): SocializedContext {
  const ids = chain(tree, parent);
  const authors = ids.map((id) => authorOf(tree, id));
  const users = [...new Set([...authors, ...asked.map((a) => a.user)])];
  const names = users.map((u) => nameOf(tree, u));
  const index = new Map(users.map((u, i) => [u, i]));
  const lines = ids.map((id) => itemLine(tree, id));
  const steps: SocializedContext["socialized_context"] = [];
  const step = (t: number, state: string, seen: ReadonlySet<string>, acts: ReadonlyMap<string, string>, minds: ReadonlyMap<string, string> = new Map()) => {
    const observations = users.map((u, i) => {
      const mind = minds.get(u);
      const obs = seen.has(u) ? SAME_AS_STATE : NONE;
      return agentLine(names[i]!, mind === undefined ? obs : `${obs === NONE ? "" : `${obs} `}<mental_state>${mind}</mental_state>`);
    });
    steps.push({ timestep: String(t), state, observations, actions: users.map((u, i) => agentLine(names[i]!, acts.get(u) ?? NONE)) });
  };
  const askedUsers = asked.map((a) => a.user);
  // One timestep per chain item: its author writes it, having seen the items before it.
  for (let k = 0; k < ids.length; k++) {
    const seen = new Set(k === 0 ? [] : [...authors.slice(k), ...askedUsers]);
    step(k + 1, k === 0 ? NONE : lines.slice(0, k).join(" "), seen, new Map([[authors[k]!, writing(tree, ids[k]!)]]));
  }
  const acts = new Map(asked.flatMap((a) => (a.action ? [[a.user, describeAction(a.action)] as const] : [])));
  const minds = new Map(asked.flatMap((a) => (a.mentalState ? [[a.user, a.mentalState] as const] : [])));
  step(ids.length + 1, lines.join(" "), new Set(askedUsers), acts, minds);
  if (acts.size > 0) {
    const after = asked.flatMap((a) => (a.action && a.action.action !== "ignore" ? [`${names[index.get(a.user)!]!} ${describeAction(a.action)}.`] : []));
    step(ids.length + 2, [...lines, ...after].join(" "), new Set(askedUsers), new Map());
  }
  return { agents_names: names, socialized_context: steps };
}

/** What the task's user saw before deciding (no label, nothing latent). */
export function visibleContext(task: SocialTask): SocializedContext {
  return build(task.tree, task.parent, [{ user: task.user }]);
}

/** The mental state of a user deciding on `parent`: what they noticed, and (latent) their stance then. */
function mentalState(tree: SocialTree, user: string, parent: string): string {
  const author = nameOf(tree, authorOf(tree, parent));
  const kind = parent === tree.post.id ? "post" : tree.interactions.find((x) => x.id === parent)!.type;
  const noticed = `I noticed ${parent} (${author}'s ${kind}).`;
  const d = tree.latent?.decisions.find((x) => x.user === user && x.parent === parent);
  const topic = TOPICS.find((t) => t.key === tree.post.topic);
  if (!d || !topic) return noticed;
  return `${noticed} On ${topic.name} I am ${stanceWords(d.stance)} (${d.stance.toFixed(2)}).`;
}

/** The episode of an item: everyone asked about it, each acting as `actionOf` says (the labels). */
export function groundTruthContext(tree: SocialTree, parent: string, asked: readonly { user: string; action: ReactionAction }[]): SocializedContext {
  return build(
    tree,
    parent,
    asked.map((a) => ({ ...a, mentalState: mentalState(tree, a.user, parent) })),
  );
}
