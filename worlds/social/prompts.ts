/**
 * The prompt a model answers for a prediction task: who the user is (profile and recent posts),
 * what is in front of them (the post, and for depth 1 the comment or repost they answer), and the
 * JSON to answer with. Everything here is what the user could see: nothing from the latent block.
 */
import { z } from "zod";
import { reactionSchemaFor } from "./action.js";
import type { SocialTree } from "./format.js";
import type { SocialTask } from "./tasks.js";

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

export function taskPrompt(task: SocialTask): string {
  const t = task.tree;
  const u = t.users.find((x) => x.id === task.user);
  const lines: string[] = [];
  const name = u?.name ?? task.user;
  lines.push(`You are ${name} on a microblog.${u?.description ? ` ${u.description}` : ""}`);
  if (u?.followers !== undefined || u?.following !== undefined) lines.push(`You have ${u?.followers ?? "?"} followers and follow ${u?.following ?? "?"} accounts.`);
  if (u?.history?.length) {
    lines.push("Your recent posts:");
    for (const h of u.history) lines.push(`- ${JSON.stringify(h.text)}`);
  }
  lines.push("");
  lines.push("In your feed:");
  const ids = chain(t, task.parent);
  ids.forEach((id, k) => lines.push(`${"  ".repeat(k)}${itemLine(t, id)}`));
  lines.push("");
  lines.push(`What do you do with [${task.parent}]? ${SOCIAL_INSTRUCTIONS}`);
  return lines.join("\n");
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
