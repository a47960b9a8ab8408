/**
 * The prompt a model answers for a prediction task: who the user is (profile and recent posts),
 * what is in front of them (the post, and for depth 1 the comment or repost they answer), and the
 * JSON to answer with. Everything here is what the user could see: nothing from the latent block.
 * The short form (`compactPrompt`) keeps the profile line and the feed and states the facts that
 * decide most reactions in one line: a policy trained from scratch reads the type from it within
 * a hundred steps, where the full prompt's 224 tokens take it past four hundred (docs/results.md).
 */
import { z } from "zod";
import { reactionSchemaFor } from "./action.js";
import type { SocialTree } from "./format.js";
import type { SocialTask } from "./tasks.js";
import { factSentences, type FactsOptions } from "./facts.js";
import { TOPICS } from "./vocabulary.js";

/** A user's display name in a tree (the id when the tree gives none). */
export function nameOf(tree: SocialTree, id: string): string {
  return tree.users.find((u) => u.id === id)?.name ?? id;
}

/** `[c3] Wei Wang commented: "..."`. */
export function itemLine(tree: SocialTree, id: string): string {
  if (id === tree.post.id) return `[${id}] ${nameOf(tree, tree.post.user)} posted: ${JSON.stringify(tree.post.text)}`;
  const x = tree.interactions.find((i) => i.id === id)!;
  const verb = x.type === "comment" ? "commented" : "reposted";
  return `[${id}] ${nameOf(tree, x.user)} ${verb}: ${JSON.stringify(x.text)}`;
}

/** The chain from the post down to `id`. */
export function chain(tree: SocialTree, id: string): string[] {
  const ids: string[] = [];
  for (let cur: string | undefined = id; cur !== undefined; ) {
    ids.push(cur);
    cur = cur === tree.post.id ? undefined : tree.interactions.find((i) => i.id === cur)?.parent;
  }
  return ids.reverse();
}

export const SOCIAL_INSTRUCTIONS =
  'Answer with one JSON object and nothing else: {"action": "comment" | "repost" | "like" | "ignore", "target": "<item id>", "content": "<text>"}. ' +
  'Give "content" for a comment (what you write) and optionally for a repost (what you add); leave it out for a like or an ignore.';

function profileLine(task: SocialTask): string {
  const u = task.tree.users.find((x) => x.id === task.user);
  return `You are ${u?.name ?? task.user} on a microblog.${u?.description ? ` ${u.description}` : ""}`;
}

function feedLines(task: SocialTask): string[] {
  return ["In your feed:", ...chain(task.tree, task.parent).map((id, k) => `${"  ".repeat(k)}${itemLine(task.tree, id)}`)];
}

export function taskPrompt(task: SocialTask): string {
  const t = task.tree;
  const u = t.users.find((x) => x.id === task.user);
  const lines: string[] = [];
  lines.push(profileLine(task));
  if (u?.followers !== undefined || u?.following !== undefined) lines.push(`You have ${u?.followers ?? "?"} followers and follow ${u?.following ?? "?"} accounts.`);
  if (u?.history?.length) {
    lines.push("Your recent posts:");
    for (const h of u.history) lines.push(`- ${JSON.stringify(h.text)}`);
  }
  lines.push("");
  lines.push(...feedLines(task));
  lines.push("");
  lines.push(`What do you do with [${task.parent}]? ${SOCIAL_INSTRUCTIONS}`);
  return lines.join("\n");
}

/** The short prompt: the profile line, the feed, the facts line, the question (the answer's form is the grammar's). */
export function compactPrompt(task: SocialTask, opts: FactsOptions = {}): string {
  const facts = factsLine(task, opts);
  return [profileLine(task), ...feedLines(task), ...(facts ? [facts] : []), `What do you do with [${task.parent}]?`].join("\n");
}

/**
 * What the user's screen shows about the asked item, stated: whose post it answers (depth 1),
 * where the post's topic stands among the interests the user's description names (in the order
 * it names them), and the user's own earlier reactions in the cascade. Undefined when there is
 * nothing to state (a post without a topic, at depth 0). With `opts`, also the facts asked of
 * facts.ts's registry (the user's stance, whether the item takes their side...).
 */
export function factsLine(task: SocialTask, opts: FactsOptions = {}): string | undefined {
  const t = task.tree;
  const parts: string[] = [];
  const parent = task.parent === t.post.id ? undefined : t.interactions.find((i) => i.id === task.parent);
  if (parent) parts.push(t.post.user === task.user ? "It answers your own post." : "It answers someone else's post.");
  if (t.post.topic !== undefined) {
    const name = TOPICS.find((x) => x.key === t.post.topic)?.name ?? t.post.topic.replace(/-/g, " ");
    const description = (t.users.find((x) => x.id === task.user)?.description ?? "").toLowerCase();
    const named = [...new Set([name, ...TOPICS.map((x) => x.name)])]
      .map((n) => ({ n, at: description.indexOf(n.toLowerCase()) }))
      .filter((x) => x.at >= 0)
      .sort((a, b) => a.at - b.at);
    const rank = named.findIndex((x) => x.n === name);
    const where = rank === 0 ? "the first of your interests" : rank === 1 ? "the second of your interests" : rank > 1 ? "one of your interests" : "not one of your interests";
    parts.push(`Its topic, ${name}, is ${where}.`);
    parts.push(...factSentences(task, parent?.text ?? t.post.text, { key: t.post.topic, index: TOPICS.findIndex((x) => x.key === t.post.topic), name }, opts));
  }
  // What the user did in this cascade before the asked item appeared.
  const before = parent ? parent.time : t.post.time;
  for (const m of t.interactions.filter((i) => i.user === task.user && i.time < before))
    parts.push(`You ${m.type === "comment" ? "commented on" : m.type === "repost" ? "reposted" : "liked"} [${m.parent}] earlier.`);
  return parts.length ? `About [${task.parent}]: ${parts.join(" ")}` : undefined;
}

const jsonSchemas = new Map<string, Record<string, unknown>>();

/** The JSON schema a task's answer must satisfy (for constrained decoding; shared by the tasks on one item id). */
export function taskJsonSchema(task: SocialTask): Readonly<Record<string, unknown>> {
  let s = jsonSchemas.get(task.parent);
  if (!s) {
    if (jsonSchemas.size >= 10_000) jsonSchemas.clear();
    jsonSchemas.set(task.parent, (s = z.toJSONSchema(reactionSchemaFor(task.parent)) as Record<string, unknown>));
  }
  return s;
}
