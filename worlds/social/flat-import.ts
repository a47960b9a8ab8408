/**
 * The flat importer: a JSONL of interactions, one per line, as microblog dumps come, rebuilt into
 * interaction trees (format.ts). A line:
 *
 *   {"post_id": "4512", "user_id": "u17", "parent_id": null, "type": "post", "text": "...", "time": 1700000000}
 *   {"post_id": "4512", "user_id": "u20", "parent_id": "4512", "type": "comment", "text": "...", "time": "2023-11-14T22:20:00Z", "id": "c88"}
 *
 * - `type`: post (the root: no parent; its id is the post id), comment, repost, like, or ignore
 *   (the user saw `parent_id` and did nothing: a candidate without an interaction).
 * - `parent_id`: the post id (a reaction to the post) or the `id` of another line of the same
 *   post; lines may come in any order. `id` is needed only on lines that others answer.
 * - `time`: a number (seconds, steps: whatever the dump uses) or an ISO 8601 date (read as
 *   seconds since 1970).
 * Depths are computed from the parents. Users come from an optional users file (JSONL of the
 * tree format's user objects), else as bare ids. Every problem is a DataError naming the line and
 * the field.
 */
import { z } from "zod";
import { DataError } from "../core/errors.js";
import { readTextInput } from "../core/text-input.js";
import { fieldPath, UserSchema, validTree, type Interaction, type SocialTree, type TreeUser } from "./format.js";

const Id = z.union([z.string().trim().min(1, "is empty").max(200), z.number().int().nonnegative().transform(String)], {
  error: (issue) => (issue.input === undefined ? "missing (expected a string or a non-negative integer)" : "expected a string or a non-negative integer"),
});

const Time = z
  .union([z.number(), z.string()], {
    error: (issue) => (issue.input === undefined ? "missing (expected a number or an ISO 8601 date)" : "expected a number or an ISO 8601 date"),
  })
  .transform((v, ctx) => {
    if (typeof v === "number") {
      if (Number.isFinite(v)) return v;
      ctx.addIssue({ code: "custom", message: "is not a finite number" });
      return z.NEVER;
    }
    const ms = Date.parse(v);
    if (!/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(ms)) {
      ctx.addIssue({ code: "custom", message: `"${v.slice(0, 40)}" is not a number or an ISO 8601 date` });
      return z.NEVER;
    }
    return ms / 1000;
  });

export const FlatLineSchema = z.looseObject({
  post_id: Id,
  user_id: Id,
  parent_id: z.union([Id, z.null(), z.literal("")]).optional(),
  type: z.enum(["post", "comment", "repost", "like", "ignore"], { error: 'expected "post", "comment", "repost", "like" or "ignore"' }),
  text: z.string().max(20_000).optional(),
  time: Time.optional(),
  id: Id.optional(),
});
export type FlatLine = z.infer<typeof FlatLineSchema>;

interface Row {
  readonly line: number;
  readonly v: FlatLine;
}

function lineError(file: string, line: number, field: string, message: string): DataError {
  return new DataError(file, { line, field }, `${field}: ${message}`);
}

/** Parses JSONL lines against a schema; each problem names its line and field. */
function readLines<T>(text: string, file: string, schema: z.ZodType<T>): { line: number; v: T }[] {
  const out: { line: number; v: T }[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(lines[i]!);
    } catch (err) {
      throw new DataError(file, { line: i + 1 }, `invalid JSON: ${(err as Error).message.replace(/ in JSON at position \d+.*$/, "")}`);
    }
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new DataError(file, { line: i + 1 }, "expected a JSON object");
    const r = schema.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      const field = fieldPath(issue.path) || "line";
      const missing = /^Invalid input: expected (.+), received undefined$/.exec(issue.message);
      throw lineError(file, i + 1, field, missing ? `missing (expected ${missing[1]})` : issue.message);
    }
    out.push({ line: i + 1, v: r.data });
  }
  return out;
}

export interface FlatImport {
  readonly trees: SocialTree[];
  /** Lines read, by type. */
  readonly counts: Readonly<Record<string, number>>;
}

/**
 * Rebuilds the trees of a flat interactions file (`text` read from `file`), in the order their
 * posts first appear. `users`, when given, is a users JSONL (`usersFile` names it in errors).
 */
export function importFlat(text: string, file: string, users?: { text: string; file: string }): FlatImport {
  const rows: Row[] = readLines(text, file, FlatLineSchema);
  if (rows.length === 0) throw new DataError(file, {}, "no lines");
  const profiles = new Map<string, TreeUser>();
  if (users) {
    for (const { line, v } of readLines(users.text, users.file, UserSchema)) {
      if (profiles.has(v.id)) throw lineError(users.file, line, "id", `user "${v.id}" appears twice`);
      profiles.set(v.id, v);
    }
  }
  const counts: Record<string, number> = { post: 0, comment: 0, repost: 0, like: 0, ignore: 0 };
  const byPost = new Map<string, Row[]>();
  for (const row of rows) {
    counts[row.v.type]!++;
    let list = byPost.get(row.v.post_id);
    if (!list) byPost.set(row.v.post_id, (list = []));
    list.push(row);
  }
  const trees: SocialTree[] = [];
  for (const [postId, list] of byPost) trees.push(buildTree(postId, list, file, profiles));
  return { trees, counts };
}

export function importFlatFile(file: string, usersFile?: string): FlatImport {
  return importFlat(readTextInput(file), file, usersFile ? { text: readTextInput(usersFile), file: usersFile } : undefined);
}

function buildTree(postId: string, rows: readonly Row[], file: string, profiles: ReadonlyMap<string, TreeUser>): SocialTree {
  const roots = rows.filter((r) => r.v.type === "post");
  if (roots.length === 0) throw lineError(file, rows[0]!.line, "post_id", `post "${postId}" has no line of type "post" (its root)`);
  if (roots.length > 1) throw lineError(file, roots[1]!.line, "type", `post "${postId}" already has its root at line ${roots[0]!.line}`);
  const root = roots[0]!;
  if (root.v.parent_id) throw lineError(file, root.line, "parent_id", `a post has no parent (got "${root.v.parent_id}")`);
  if (root.v.id !== undefined && root.v.id !== postId) throw lineError(file, root.line, "id", `a post's id is its post_id ("${postId}"), got "${root.v.id}"`);
  if (root.v.time === undefined) throw lineError(file, root.line, "time", "missing (expected a number or an ISO 8601 date)");

  // Interactions by id; the lines of their parents must be in this post.
  const byId = new Map<string, Row>([[postId, root]]);
  const reactions = rows.filter((r) => r !== root && r.v.type !== "ignore");
  for (const r of rows) {
    if (r === root) continue;
    if (!r.v.parent_id) throw lineError(file, r.line, "parent_id", `missing: a ${r.v.type} answers the post or another line`);
    if (r.v.type !== "ignore" && r.v.time === undefined) throw lineError(file, r.line, "time", "missing (expected a number or an ISO 8601 date)");
    if (r.v.type !== "ignore" && r.v.id !== undefined) {
      const before = byId.get(r.v.id);
      if (before) throw lineError(file, r.line, "id", `"${r.v.id}" is already the id of line ${before.line}`);
      byId.set(r.v.id, r);
    }
    if ((r.v.type === "like" || r.v.type === "ignore") && r.v.text) throw lineError(file, r.line, "text", `a ${r.v.type} has no text`);
  }
  const depthOf = new Map<Row, number>([[root, -1]]);
  const depth = (r: Row, path: Set<Row>): number => {
    const known = depthOf.get(r);
    if (known !== undefined) return known;
    const parent = byId.get(r.v.parent_id!);
    if (!parent) throw lineError(file, r.line, "parent_id", `no line of post "${postId}" has id "${r.v.parent_id}"`);
    if (parent.v.type === "like") throw lineError(file, r.line, "parent_id", `"${r.v.parent_id}" (line ${parent.line}) is a like: nothing answers a like`);
    if (path.has(parent)) throw lineError(file, r.line, "parent_id", `"${r.v.parent_id}" (line ${parent.line}) leads back to this line: the parents form a loop`);
    path.add(r);
    const d = depth(parent, path) + 1;
    depthOf.set(r, d);
    return d;
  };

  const ids = new Map<Row, string>([[root, postId]]);
  const idOf = (r: Row) => {
    let id = ids.get(r);
    if (id === undefined) ids.set(r, (id = r.v.id ?? `${postId}#${r.line}`));
    return id;
  };
  const interactions: Interaction[] = [];
  for (const r of reactions) {
    const d = depth(r, new Set());
    interactions.push({ id: idOf(r), user: r.v.user_id, parent: idOf(byId.get(r.v.parent_id!)!), depth: d, type: r.v.type as Interaction["type"], text: r.v.text ?? "", time: r.v.time as number });
  }
  const candidates: { user: string; parent: string }[] = [];
  const seen = new Set<string>();
  const reactedAt = new Map<string, Row>();
  for (const x of reactions) if (!reactedAt.has(`${x.v.user_id}\u0000${x.v.parent_id}`)) reactedAt.set(`${x.v.user_id}\u0000${x.v.parent_id}`, x);
  for (const r of rows) {
    if (r.v.type !== "ignore") continue;
    depth(r, new Set());
    const parent = byId.get(r.v.parent_id!)!;
    if (parent.v.user_id === r.v.user_id) throw lineError(file, r.line, "user_id", `"${r.v.user_id}" wrote "${r.v.parent_id}": a user does not ignore their own item`);
    const key = `${r.v.user_id}\u0000${idOf(parent)}`;
    if (seen.has(key)) throw lineError(file, r.line, "user_id", `"${r.v.user_id}" already ignores "${r.v.parent_id}" on an earlier line`);
    const reacted = reactedAt.get(`${r.v.user_id}\u0000${r.v.parent_id}`);
    if (reacted) throw lineError(file, r.line, "type", `"${r.v.user_id}" ignores "${r.v.parent_id}" but reacts to it at line ${reacted.line}`);
    seen.add(key);
    candidates.push({ user: r.v.user_id, parent: idOf(parent) });
  }
  // Users in order of appearance: the author, then whoever appears on a line.
  const users: TreeUser[] = [];
  const listed = new Set<string>();
  for (const r of [root, ...rows]) {
    if (listed.has(r.v.user_id)) continue;
    listed.add(r.v.user_id);
    users.push(profiles.get(r.v.user_id) ?? { id: r.v.user_id });
  }
  const tree = {
    id: postId,
    post: { id: postId, user: root.v.user_id, text: root.v.text ?? "", time: root.v.time as number },
    users,
    ...(candidates.length ? { candidates } : {}),
    interactions,
  };
  // The trees this builds are valid by construction; checking them again guards the importer itself.
  return validTree(tree, (field, message) => new DataError(file, { line: root.line, field }, `post "${postId}": ${field}: ${message}`));
}
