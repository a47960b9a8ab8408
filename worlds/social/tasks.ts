/**
 * The prediction tasks of a tree file: one per (candidate user, item they saw), with the label
 * the file gives. The label is the user's earliest interaction on that item (by time, then by
 * its place in the file), or "ignore" when the user has none; its content is the interaction's
 * text. Depth is the depth the reaction would have: 0 for the post, 1 for a depth-0 comment or
 * repost. Candidates are the tree's `candidates` plus every user with an interaction on an item
 * (except on their own item).
 */
import type { ReactionAction, ReactionType } from "./action.js";
import type { Interaction, SocialTree, SourcedTree } from "./format.js";

export interface SocialTask {
  /**
   * `<tree id>/<user>@<item>`, the tree's id with "%" and "/" written %25 and %2F (`taskTreeId`),
   * so that the first "/" always ends it: a user or item id may hold any character.
   */
  readonly id: string;
  readonly tree: SocialTree;
  readonly source: { readonly file: string; readonly line?: number; readonly index: number };
  readonly user: string;
  /** The item the user reacts to (the target). */
  readonly parent: string;
  readonly parentType: "post" | "comment" | "repost";
  /** 0 for a reaction to the post, 1 to a depth-0 item, ... */
  readonly depth: number;
  readonly label: { readonly type: ReactionType; readonly content: string };
}

/**
 * A tree's id as a task id writes it: "%" and "/" percent-encoded, every other character as it is
 * (the ids of trees without either, all generated ones, are unchanged).
 */
export const taskTreeId = (id: string): string => id.replace(/%/g, "%25").replace(/\//g, "%2F");

export function tasksOf(trees: readonly SourcedTree[]): SocialTask[] {
  const out: SocialTask[] = [];
  for (const s of trees) {
    const t = s.tree;
    const parents = new Map<string, { depth: number; type: SocialTask["parentType"]; user: string }>([[t.post.id, { depth: -1, type: "post", user: t.post.user }]]);
    for (const x of t.interactions) if (x.type !== "like") parents.set(x.id, { depth: x.depth, type: x.type, user: x.user });
    // The earliest interaction of each (user, parent).
    const first = new Map<string, Interaction>();
    for (const x of t.interactions) {
      const key = `${x.user}\u0000${x.parent}`;
      const had = first.get(key);
      if (!had || x.time < had.time) first.set(key, x);
    }
    const pairs: { user: string; parent: string }[] = [];
    const have = new Set<string>();
    const add = (user: string, parent: string) => {
      const key = `${user}\u0000${parent}`;
      if (have.has(key) || parents.get(parent)?.user === user) return;
      have.add(key);
      pairs.push({ user, parent });
    };
    for (const c of t.candidates ?? []) add(c.user, c.parent);
    for (const x of t.interactions) add(x.user, x.parent);
    // Post first, then each parent in file order; users in order of listing.
    const parentOrder = new Map([...parents.keys()].map((id, i) => [id, i]));
    const userOrder = new Map(t.users.map((u, i) => [u.id, i]));
    pairs.sort((a, b) => parentOrder.get(a.parent)! - parentOrder.get(b.parent)! || userOrder.get(a.user)! - userOrder.get(b.user)!);
    for (const { user, parent } of pairs) {
      const p = parents.get(parent)!;
      const x = first.get(`${user}\u0000${parent}`);
      out.push({
        id: `${taskTreeId(t.id)}/${user}@${parent}`,
        tree: t,
        source: { file: s.file, ...(s.line !== undefined ? { line: s.line } : {}), index: s.index },
        user,
        parent,
        parentType: p.type,
        depth: p.depth + 1,
        label: x ? { type: x.type, content: x.type === "like" ? "" : x.text } : { type: "ignore", content: "" },
      });
    }
  }
  return out;
}

/**
 * An answer to a task as JSON text: `type` on the task's item, with `content` for a comment (a
 * comment without text, which imported data can have, says "...": the schema wants some) and,
 * when there is any, for a repost.
 */
export function replyFor(task: SocialTask, type: ReactionType, content: string): string {
  const target = task.parent;
  const a: ReactionAction =
    type === "comment"
      ? { action: "comment", target, content: content.trim() === "" ? "..." : content }
      : type === "repost"
        ? content === ""
          ? { action: "repost", target }
          : { action: "repost", target, content }
        : { action: type, target };
  return JSON.stringify(a);
}

/** The label as the answer a model should write (the SFT target, the reference of exports). */
export function labelReply(task: SocialTask): string {
  return replyFor(task, task.label.type, task.label.content);
}
