/**
 * The interaction-tree format (docs/worlds/social.md): one post and everything that happened
 * under it, as one JSON object; a file holds one tree per line (JSONL) or a JSON array of trees.
 *
 *   { "id": "gen-7-0",
 *     "post": { "id": "p0", "user": "u3", "text": "...", "time": 0, "topic": "nuclear-power" },
 *     "users": [ { "id": "u3", "name": "Lin Chen", "description": "...", "followers": 31,
 *                  "following": 12, "history": [ { "text": "...", "time": -40 } ] }, ... ],
 *     "follows": [ ["u5", "u3"], ... ],                 optional: u5 follows u3
 *     "candidates": [ { "user": "u5", "parent": "p0" }, ... ],   optional
 *     "interactions": [ { "id": "c1", "user": "u5", "parent": "p0", "depth": 0,
 *                         "type": "comment", "text": "...", "time": 3 }, ... ],
 *     "latent": { ... } }                               optional: the generator's ground truth
 *
 * Depth: a reaction to the post is depth 0, a reaction to a depth-0 interaction depth 1, ...
 * Candidates are the users who saw an item and could have reacted to it; a candidate without an
 * interaction on that item ignored it. A user with an interaction on an item is a candidate for
 * it whether listed or not; without `candidates`, the interactions are all there is (no ignores).
 * Every problem is a DataError naming the file, the line (JSONL) and the field.
 */
import { z } from "zod";
import { DataError } from "../core/errors.js";
import { readTextInput } from "../core/text-input.js";

const Id = z.union([z.string().min(1, "is empty").max(200), z.number().int().nonnegative().transform(String)], {
  error: (issue) => (issue.input === undefined ? "missing (expected a string or a non-negative integer)" : "expected a string or a non-negative integer"),
});
const Time = z.number().refine(Number.isFinite, "is not a finite number");
const Text = z.string().max(20_000);

export const HistoryEntrySchema = z.looseObject({
  text: Text,
  time: Time.optional(),
  type: z.enum(["post", "comment", "repost"]).optional(),
});

export const UserSchema = z.looseObject({
  id: Id,
  name: z.string().max(200).optional(),
  description: Text.optional(),
  followers: z.number().int().nonnegative().optional(),
  following: z.number().int().nonnegative().optional(),
  history: z.array(HistoryEntrySchema).optional(),
});

export const PostSchema = z.looseObject({
  id: Id,
  user: Id,
  text: Text,
  time: Time,
  topic: z.string().max(200).optional(),
});

export const INTERACTION_TYPES = ["comment", "repost", "like"] as const;

export const InteractionSchema = z.looseObject({
  id: Id,
  user: Id,
  parent: Id,
  depth: z.number().int().nonnegative(),
  type: z.enum(INTERACTION_TYPES, { error: 'expected "comment", "repost" or "like"' }),
  text: Text.default(""),
  time: Time,
});

export const CandidateSchema = z.looseObject({ user: Id, parent: Id });

const Numbers = z.record(z.string(), z.number());

/** The generator's latent ground truth: what the `simulation` agent knows (see generator.ts). */
export const LatentSchema = z.object({
  generator: z.string(),
  seed: z.number().int(),
  config: z.object({ engagement: z.number(), maxDepth: z.number().int().nonnegative(), influence: z.number() }),
  users: z.array(z.object({ id: Id, interests: Numbers, stances: Numbers, activity: z.number(), style: z.string() })),
  items: z.array(z.object({ id: Id, stance: z.number() })),
  decisions: z.array(
    z.object({
      user: Id,
      parent: Id,
      stance: z.number(),
      direct: z.boolean(),
      earlier: z.number().int().nonnegative(),
      draws: z.tuple([z.number().min(0).max(1), z.number().min(0).max(1), z.number().int().nonnegative()]),
    }),
  ),
});

export const TreeSchema = z.looseObject({
  id: Id,
  post: PostSchema,
  users: z.array(UserSchema),
  follows: z.array(z.tuple([Id, Id])).optional(),
  candidates: z.array(CandidateSchema).optional(),
  interactions: z.array(InteractionSchema),
  latent: LatentSchema.optional(),
});

export type SocialTree = z.infer<typeof TreeSchema>;
export type TreeUser = z.infer<typeof UserSchema>;
export type Interaction = z.infer<typeof InteractionSchema>;
export type Latent = z.infer<typeof LatentSchema>;

/** A tree and where it came from. */
export interface SourcedTree {
  readonly tree: SocialTree;
  readonly file: string;
  /** 1-based line of a JSONL file; undefined in a JSON array file. */
  readonly line?: number;
  /** 0-based position in the file. */
  readonly index: number;
}

/** A zod issue path as errors name it: `interactions[3].parent`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}

function issueMessage(issue: z.core.$ZodIssue): string {
  const missing = /^Invalid input: expected (.+), received undefined$/.exec(issue.message);
  return missing ? `missing (expected ${missing[1]})` : issue.message;
}

export function readTreeFile(file: string): SourcedTree[] {
  return parseTrees(readTextInput(file), file);
}

/** Reads trees from JSONL (one per line; blank lines allowed) or a JSON array. */
export function parseTrees(text: string, file: string): SourcedTree[] {
  const out: SourcedTree[] = [];
  if (text.trimStart().startsWith("[")) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      const m = /position (\d+)/.exec((err as Error).message);
      const line = m ? text.slice(0, Number(m[1])).split("\n").length : text.split("\n").length;
      throw new DataError(file, { line }, `invalid JSON: ${(err as Error).message.replace(/ in JSON at position \d+.*$/, "")}`);
    }
    (json as unknown[]).forEach((raw, index) => out.push({ tree: validTree(raw, (field, msg) => new DataError(file, { field: `[${index}]${field ? `.${field}` : ""}` }, msg)), file, index }));
  } else {
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.trim() === "") continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (err) {
        throw new DataError(file, { line: i + 1 }, `invalid JSON: ${(err as Error).message.replace(/ in JSON at position \d+.*$/, "")}`);
      }
      const at = (field: string, msg: string) => new DataError(file, { line: i + 1, field }, field ? `${field}: ${msg}` : msg);
      out.push({ tree: validTree(raw, at), file, line: i + 1, index: out.length });
    }
  }
  if (out.length === 0) throw new DataError(file, {}, "no trees in the file");
  const ids = new Map<string, SourcedTree>();
  for (const t of out) {
    const before = ids.get(t.tree.id);
    if (before) {
      const where = before.line !== undefined ? `line ${before.line}` : `[${before.index}]`;
      throw new DataError(file, t.line !== undefined ? { line: t.line, field: "id" } : { field: `[${t.index}].id` }, `${t.line !== undefined ? "id: " : ""}tree id "${t.tree.id}" already used at ${where}`);
    }
    ids.set(t.tree.id, t);
  }
  return out;
}

type ErrorAt = (field: string, message: string) => DataError;

/** Validates one tree: its shape (zod), then what refers to what. */
export function validTree(raw: unknown, at: ErrorAt): SocialTree {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw at("", `expected a tree (a JSON object), got ${Array.isArray(raw) ? "an array" : raw === null ? "null" : typeof raw}`);
  const parsed = TreeSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw at(fieldPath(issue.path) || "", issueMessage(issue));
  }
  const tree = parsed.data;
  const users = new Map<string, number>();
  tree.users.forEach((u, i) => {
    if (users.has(u.id)) throw at(`users[${i}].id`, `user "${u.id}" is already users[${users.get(u.id)}]`);
    users.set(u.id, i);
  });
  const known = (id: string, field: string) => {
    if (!users.has(id)) throw at(field, `no user "${id}" in users`);
  };
  known(tree.post.user, "post.user");
  // Items: the post (depth -1) and every interaction.
  const items = new Map<string, { depth: number; type: string; user: string; field: string }>([[tree.post.id, { depth: -1, type: "post", user: tree.post.user, field: "post.id" }]]);
  tree.interactions.forEach((x, i) => {
    const before = items.get(x.id);
    if (before) throw at(`interactions[${i}].id`, `item id "${x.id}" is already ${before.field}`);
    items.set(x.id, { depth: x.depth, type: x.type, user: x.user, field: `interactions[${i}].id` });
  });
  tree.interactions.forEach((x, i) => {
    known(x.user, `interactions[${i}].user`);
    const parent = items.get(x.parent);
    if (!parent) throw at(`interactions[${i}].parent`, `no item "${x.parent}" in this tree`);
    if (parent.type === "like") throw at(`interactions[${i}].parent`, `"${x.parent}" is a like: nothing answers a like`);
    if (x.depth !== parent.depth + 1) throw at(`interactions[${i}].depth`, `is ${x.depth}, but its parent "${x.parent}" is ${parent.depth < 0 ? "the post" : `at depth ${parent.depth}`}: expected ${parent.depth + 1}`);
    if (x.type === "like" && x.text !== "") throw at(`interactions[${i}].text`, "a like has no text");
  });
  const pairs = new Set<string>();
  tree.candidates?.forEach((c, i) => {
    known(c.user, `candidates[${i}].user`);
    const parent = items.get(c.parent);
    if (!parent) throw at(`candidates[${i}].parent`, `no item "${c.parent}" in this tree`);
    if (parent.type === "like") throw at(`candidates[${i}].parent`, `"${c.parent}" is a like: nothing answers a like`);
    if (parent.user === c.user) throw at(`candidates[${i}].user`, `"${c.user}" wrote "${c.parent}": a user is not a candidate for their own item`);
    const key = `${c.user}\u0000${c.parent}`;
    if (pairs.has(key)) throw at(`candidates[${i}]`, `"${c.user}" on "${c.parent}" is listed twice`);
    pairs.add(key);
  });
  tree.follows?.forEach(([a, b], i) => {
    known(a, `follows[${i}][0]`);
    known(b, `follows[${i}][1]`);
  });
  if (tree.latent) {
    const l = tree.latent;
    l.users.forEach((u, i) => known(u.id, `latent.users[${i}].id`));
    l.items.forEach((x, i) => {
      if (!items.has(x.id)) throw at(`latent.items[${i}].id`, `no item "${x.id}" in this tree`);
    });
    l.decisions.forEach((d, i) => {
      known(d.user, `latent.decisions[${i}].user`);
      if (!items.has(d.parent)) throw at(`latent.decisions[${i}].parent`, `no item "${d.parent}" in this tree`);
    });
  }
  return tree;
}

/** Trees as JSONL, one per line. */
export function serializeTrees(trees: readonly SocialTree[]): string {
  return trees.map((t) => JSON.stringify(t)).join("\n") + "\n";
}
