/**
 * A self-play pool's held-out set (server/self-play/held-out.ts): the quiz files' questions, each
 * asked once however many seats it was drawn for, scored as the room's quiz scores a seat (the
 * benchmark runner and judge), and named by a hash of their ids so that rounds can be seen to be
 * scored on the same set.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { heldOutQuestions, questionSetOf, scoreHeldOut } from "../../server/self-play/held-out.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { tinyCheckpoint } from "../policy/fixtures.js";

const STORY = [
  "1 Ella entered the garage.",
  "2 Avery entered the garage.",
  "3 The spinach is in the green_crate.",
  "4 Ella exited the garage.",
  "5 Avery moved the spinach to the green_treasure_chest.",
];
const OTHER = ["1 Noah entered the attic.", "2 The grapes is in the blue_box.", "3 Noah moved the grapes to the red_drawer."];
const q = (story: readonly string[], question: string, answer: string) => [...story, `${story.length + 1} ${question}\t${answer}\t1`];

/** Two episodes' quiz files as a room writes them: every seat's questions one after another, overlapping. */
function quizFiles(): string[] {
  const dir = mkdtempSync(join(tmpdir(), "sw-held-out-"));
  const first = [
    // Seat A's two questions, then seat B's: the first of them again, and one of its own.
    ...q(STORY, "Where will Ella look for the spinach?", "green_crate"),
    ...q(STORY, "Where is the spinach really?", "green_treasure_chest"),
    ...q(STORY, "Where will Ella look for the spinach?", "green_crate"),
    ...q(STORY, "Where was the spinach at the beginning?", "green_crate"),
  ];
  const second = [...q(OTHER, "Where is the grapes really?", "red_drawer"), ...q(OTHER, "Where is the grapes really?", "red_drawer")];
  const files = [join(dir, "episode-1.txt"), join(dir, "episode-2.txt")];
  writeFileSync(files[0]!, first.join("\n") + "\n");
  writeFileSync(files[1]!, second.join("\n") + "\n");
  return files;
}

describe("self-play held-out set", () => {
  it("asks each question once, whichever seats it was drawn for, in file order", async () => {
    const files = quizFiles();
    const items = await heldOutQuestions(await loadBenchmark("tomi"), files);
    expect(items.map((i) => i.question)).toEqual(["Where will Ella look for the spinach?", "Where is the spinach really?", "Where was the spinach at the beginning?", "Where is the grapes really?"]);
    expect(items.map((i) => i.id)).toEqual(["episode-1.txt#0", "episode-1.txt#1", "episode-1.txt#3", "episode-2.txt#0"]);
  });

  it("scores an agent as the quiz does, on a set its hash names", async () => {
    const files = quizFiles();
    // The world model's own agent answers every label: the judge counts all four right.
    const oracle = await scoreHeldOut({ world: "tomi", files, spec: "simulation" });
    expect(oracle).toEqual({ questions: 4, correct: 4, questionSet: questionSetOf(await heldOutQuestions(await loadBenchmark("tomi"), files)) });
    // Another set (one episode fewer) has another name.
    const fewer = await scoreHeldOut({ world: "tomi", files: files.slice(0, 1), spec: "simulation" });
    expect(fewer.questions).toBe(3);
    expect(fewer.questionSet).not.toBe(oracle.questionSet);

    // A policy, greedily, as a seat's spec asks it: the same answers every time, on the same set.
    const { dir } = await tinyCheckpoint(31);
    const spec = `policy:${dir}?max_new_tokens=8&answer_temperature=0`;
    const answered: number[] = [];
    const a = await scoreHeldOut({ world: "tomi", files, spec, onAnswer: (done) => answered.push(done) });
    const b = await scoreHeldOut({ world: "tomi", files, spec });
    expect(answered).toEqual([1, 2, 3, 4]);
    expect(a).toEqual(b);
    expect(a.questions).toBe(4);
    expect(a.questionSet).toBe(oracle.questionSet);
  });

  it("names a file without questions, and stops when asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-held-out-"));
    const empty = join(dir, "episode-9.txt");
    writeFileSync(empty, "");
    await expect(scoreHeldOut({ world: "tomi", files: [empty], spec: "simulation" })).rejects.toThrow(`${empty}: no questions found`);
    const stop = new AbortController();
    stop.abort();
    await expect(scoreHeldOut({ world: "tomi", files: quizFiles(), spec: "simulation", signal: stop.signal })).rejects.toThrow("interrupted after 0 of 4 items");
  });
});
