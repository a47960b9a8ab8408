import { describe, expect, it } from "vitest";
import { errorOf } from "../data-error.js";
import { importFlat } from "../../worlds/social/flat-import.js";
import { parseTrees, serializeTrees, type SocialTree } from "../../worlds/social/format.js";
import { generateSocial } from "../../worlds/social/generator.js";
import { tasksOf } from "../../worlds/social/tasks.js";

const tree = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: "t1",
  post: { id: "p", user: "a", text: "EVs rock", time: 0, topic: "electric-cars" },
  users: [{ id: "a", name: "Ann" }, { id: "b" }, { id: "c" }],
  candidates: [{ user: "b", parent: "p" }, { user: "c", parent: "p" }],
  interactions: [
    { id: "x", user: "b", parent: "p", depth: 0, type: "comment", text: "Agreed", time: 2 },
    { id: "y", user: "a", parent: "x", depth: 1, type: "like", time: 3 },
  ],
  ...over,
});

const jsonl = (...trees: unknown[]) => trees.map((t) => JSON.stringify(t)).join("\n") + "\n";

describe("interaction-tree files", () => {
  it("reads JSONL and JSON arrays alike, and writes what it reads", () => {
    const a = parseTrees(jsonl(tree(), tree({ id: "t2" })), "f.jsonl");
    expect(a.map((t) => [t.tree.id, t.line])).toEqual([
      ["t1", 1],
      ["t2", 2],
    ]);
    const b = parseTrees(JSON.stringify([tree(), tree({ id: "t2" })]), "f.json");
    expect(b.map((t) => t.tree)).toEqual(a.map((t) => t.tree));
    expect(parseTrees(serializeTrees(a.map((t) => t.tree)), "g").map((t) => t.tree)).toEqual(a.map((t) => t.tree));
    // A like's text defaults to "".
    expect(a[0]!.tree.interactions[1]!.text).toBe("");
  });

  it("names the file, line and field of every problem", () => {
    const at = (t: unknown, line = 2) => errorOf(() => parseTrees(jsonl(tree({ id: "t0" }), t), "f.jsonl"));
    const cases: [unknown, string][] = [
      [tree({ interactions: [{ id: "x", user: "b", parent: "p", depth: 0, type: "comment", text: "a" }] }), "f.jsonl:2: interactions[0].time: missing (expected number)"],
      [tree({ interactions: [{ id: "x", user: "b", parent: "q", depth: 0, type: "comment", text: "a", time: 1 }] }), 'f.jsonl:2: interactions[0].parent: no item "q" in this tree'],
      [tree({ interactions: [{ id: "x", user: "b", parent: "p", depth: 1, type: "comment", text: "a", time: 1 }] }), 'f.jsonl:2: interactions[0].depth: is 1, but its parent "p" is the post: expected 0'],
      [tree({ interactions: [{ id: "x", user: "b", parent: "p", depth: 0, type: "share", time: 1 }] }), 'f.jsonl:2: interactions[0].type: expected "comment", "repost" or "like"'],
      [tree({ interactions: [{ id: "x", user: "z", parent: "p", depth: 0, type: "like", time: 1 }] }), 'f.jsonl:2: interactions[0].user: no user "z" in users'],
      [tree({ interactions: [{ id: "x", user: "b", parent: "p", depth: 0, type: "like", text: "hi", time: 1 }] }), "f.jsonl:2: interactions[0].text: a like has no text"],
      [tree({ interactions: [{ id: "p", user: "b", parent: "p", depth: 0, type: "like", time: 1 }] }), 'f.jsonl:2: interactions[0].id: item id "p" is already post.id'],
      [tree({ candidates: [{ user: "a", parent: "p" }] }), 'f.jsonl:2: candidates[0].user: "a" wrote "p": a user is not a candidate for their own item'],
      [tree({ candidates: [{ user: "b", parent: "p" }, { user: "b", parent: "p" }] }), 'f.jsonl:2: candidates[1]: "b" on "p" is listed twice'],
      [tree({ users: [{ id: "a" }, { id: "a" }] }), 'f.jsonl:2: users[1].id: user "a" is already users[0]'],
      [tree({ post: { id: "p", user: "a", text: "x", time: "noon" } }), "f.jsonl:2: post.time: Invalid input: expected number, received string"],
      [[1, 2], "f.jsonl:2: expected a tree (a JSON object), got an array"],
      [tree({ id: "t0" }), 'f.jsonl:2: id: tree id "t0" already used at line 1'],
    ];
    for (const [t, message] of cases) {
      const e = at(t);
      expect(e.message).toBe(message);
      expect(e.line).toBe(2);
    }
    expect(errorOf(() => parseTrees('{"id": "t1"\n', "f.jsonl")).message).toMatch(/^f\.jsonl:1: invalid JSON: /);
    expect(errorOf(() => parseTrees("\n\n", "f.jsonl")).message).toBe("f.jsonl: no trees in the file");
    expect(errorOf(() => parseTrees(JSON.stringify([tree(), { ...tree(), users: [] }]), "f.json")).message).toBe('f.json ([1].post.user): no user "a" in users');
  });

  it("labels every candidate: its earliest interaction on the item, or ignore", () => {
    const t = tree({
      interactions: [
        { id: "x", user: "b", parent: "p", depth: 0, type: "comment", text: "Agreed", time: 2 },
        { id: "w", user: "b", parent: "p", depth: 0, type: "repost", text: "", time: 1 },
        { id: "y", user: "a", parent: "x", depth: 1, type: "comment", text: "@b thanks", time: 3 },
      ],
    });
    const tasks = tasksOf(parseTrees(jsonl(t), "f.jsonl"));
    expect(tasks.map((k) => [k.id, k.depth, k.parentType, k.label.type, k.label.content])).toEqual([
      ["t1/b@p", 0, "post", "repost", ""],
      ["t1/c@p", 0, "post", "ignore", ""],
      ["t1/a@x", 1, "comment", "comment", "@b thanks"],
    ]);
    expect(tasks[0]!.source).toEqual({ file: "f.jsonl", line: 1, index: 0 });
  });

  it("reads back the generator's files, with their latent block", () => {
    const g = generateSocial(5, 3);
    const trees = parseTrees(g.jsonl, "gen.jsonl");
    expect(trees.map((t) => t.tree)).toEqual(g.trees as SocialTree[]);
    expect(trees.every((t) => t.tree.latent !== undefined)).toBe(true);
  });
});

describe("the flat importer", () => {
  const lines = (...xs: Record<string, unknown>[]) => xs.map((x) => JSON.stringify(x)).join("\n") + "\n";
  const root = { post_id: "9", user_id: "u1", parent_id: null, type: "post", text: "Nuclear now", time: 100 };

  it("rebuilds trees from lines in any order: depths from parents, ignores as candidates, dates as seconds", () => {
    const text = lines(
      { post_id: "9", user_id: "u3", parent_id: "c1", type: "comment", text: "@u2 no", time: "1970-01-01T00:03:20Z", id: "c2" },
      { post_id: "7", user_id: "u5", parent_id: "", type: "post", text: "Other post", time: 5 },
      root,
      { post_id: "9", user_id: "u2", parent_id: "9", type: "comment", text: "Yes!", time: 150, id: "c1" },
      { post_id: "9", user_id: "u4", parent_id: "9", type: "ignore" },
      { post_id: "9", user_id: "u4", parent_id: "c1", type: "like", time: 160 },
      { post_id: 7, user_id: "u1", parent_id: 7, type: "repost", time: 6 },
    );
    const { trees, counts } = importFlat(text, "dump.jsonl");
    expect(counts).toEqual({ post: 2, comment: 2, repost: 1, like: 1, ignore: 1 });
    expect(trees.map((t) => t.id)).toEqual(["9", "7"]);
    const t = trees[0]!;
    expect(t.post).toEqual({ id: "9", user: "u1", text: "Nuclear now", time: 100 });
    expect(t.users.map((u) => u.id)).toEqual(["u1", "u3", "u2", "u4"]);
    expect(t.interactions).toEqual([
      { id: "c2", user: "u3", parent: "c1", depth: 1, type: "comment", text: "@u2 no", time: 200 },
      { id: "c1", user: "u2", parent: "9", depth: 0, type: "comment", text: "Yes!", time: 150 },
      { id: "9#6", user: "u4", parent: "c1", depth: 1, type: "like", text: "", time: 160 },
    ]);
    expect(t.candidates).toEqual([{ user: "u4", parent: "9" }]);
    const tasks = tasksOf(trees.map((tree, index) => ({ tree, file: "dump.jsonl", index })));
    expect(tasks.map((k) => [k.user, k.parent, k.depth, k.label.type])).toEqual([
      ["u2", "9", 0, "comment"],
      ["u4", "9", 0, "ignore"],
      ["u3", "c1", 1, "comment"],
      ["u4", "c1", 1, "like"],
      ["u1", "7", 0, "repost"],
    ]);
  });

  it("takes profiles from a users file", () => {
    const users = lines({ id: "u1", name: "Lin", description: "Engineer", followers: 10, history: [{ text: "Hello" }] });
    const { trees } = importFlat(lines(root), "d.jsonl", { text: users, file: "users.jsonl" });
    expect(trees[0]!.users).toEqual([{ id: "u1", name: "Lin", description: "Engineer", followers: 10, history: [{ text: "Hello" }] }]);
    expect(errorOf(() => importFlat(lines(root), "d.jsonl", { text: users + users, file: "users.jsonl" })).message).toBe('users.jsonl:2: id: user "u1" appears twice');
  });

  it("names the line and the field of every problem", () => {
    const cases: [Record<string, unknown>[], string][] = [
      [[{ ...root, type: "share" }], 'd.jsonl:1: type: expected "post", "comment", "repost", "like" or "ignore"'],
      [[{ ...root, user_id: undefined }], "d.jsonl:1: user_id: missing (expected a string or a non-negative integer)"],
      [[{ ...root, user_id: "" }], "d.jsonl:1: user_id: is empty"],
      [[{ ...root, time: "yesterday" }], 'd.jsonl:1: time: "yesterday" is not a number or an ISO 8601 date'],
      [[{ post_id: "9", user_id: "u2", parent_id: "9", type: "like", time: 1 }], 'd.jsonl:1: post_id: post "9" has no line of type "post" (its root)'],
      [[root, { ...root }], 'd.jsonl:2: type: post "9" already has its root at line 1'],
      [[root, { post_id: "9", user_id: "u2", parent_id: "x", type: "comment", text: "a", time: 1 }], 'd.jsonl:2: parent_id: no line of post "9" has id "x"'],
      [[root, { post_id: "9", user_id: "u2", type: "comment", text: "a", time: 1 }], "d.jsonl:2: parent_id: missing: a comment answers the post or another line"],
      [[root, { post_id: "9", user_id: "u2", parent_id: "9", type: "like", time: 1, id: "l" }, { post_id: "9", user_id: "u3", parent_id: "l", type: "comment", text: "a", time: 2 }], 'd.jsonl:3: parent_id: "l" (line 2) is a like: nothing answers a like'],
      [[root, { post_id: "9", user_id: "u2", parent_id: "b", type: "comment", text: "a", time: 1, id: "a" }, { post_id: "9", user_id: "u3", parent_id: "a", type: "comment", text: "b", time: 2, id: "b" }], 'd.jsonl:3: parent_id: "a" (line 2) leads back to this line: the parents form a loop'],
      [[root, { post_id: "9", user_id: "u2", parent_id: "9", type: "comment", text: "a", time: 1, id: "9" }], 'd.jsonl:2: id: "9" is already the id of line 1'],
      [[root, { post_id: "9", user_id: "u2", parent_id: "9", type: "like", text: "nice", time: 1 }], "d.jsonl:2: text: a like has no text"],
      [[root, { post_id: "9", user_id: "u1", parent_id: "9", type: "ignore" }], 'd.jsonl:2: user_id: "u1" wrote "9": a user does not ignore their own item'],
      [[root, { post_id: "9", user_id: "u2", parent_id: "9", type: "ignore" }, { post_id: "9", user_id: "u2", parent_id: "9", type: "like", time: 3 }], 'd.jsonl:2: type: "u2" ignores "9" but reacts to it at line 3'],
      [[root, { post_id: "9", user_id: "u2", parent_id: "9", type: "comment", text: "a" }], "d.jsonl:2: time: missing (expected a number or an ISO 8601 date)"],
    ];
    for (const [xs, message] of cases) {
      const e = errorOf(() => importFlat(lines(...xs), "d.jsonl"));
      expect(e.message).toBe(message);
    }
    expect(errorOf(() => importFlat("{oops\n", "d.jsonl")).message).toMatch(/^d\.jsonl:1: invalid JSON: /);
    expect(errorOf(() => importFlat("[1]\n", "d.jsonl")).message).toBe("d.jsonl:1: expected a JSON object");
  });
});
