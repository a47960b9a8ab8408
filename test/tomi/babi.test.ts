import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseTomi, readTomiFile } from "../../worlds/tomi/babi.js";
import { errorOf } from "../data-error.js";

const STORY = [
  "1 Ella entered the garage.",
  "2 Avery entered the garage.",
  "3 The spinach is in the green_crate.",
  "4 Ella exited the garage.",
  "5 Aiden loves the tangerine",
  "6 Avery moved the spinach to the green_treasure_chest.",
];
const ok = [...STORY, "7 Where will Ella look for the spinach?\tgreen_crate\t1", ...STORY, "7 Where is the spinach really?\tgreen_treasure_chest\t1"].join("\n") + "\n";
const trace = "enter_agent_1,enter_agent_0,agent_1_exits,agent_0_moves_obj,first_order_1_tom,false_belief\nenter_agent_1,enter_agent_0,agent_1_exits,agent_0_moves_obj,reality,false_belief\n";

describe("ToMi bAbI reader", () => {
  it("reads questions with their stories, answers and traces", () => {
    const f = parseTomi(ok, "x.txt", trace, "x.trace");
    expect(f.items).toHaveLength(2);
    const [a, b] = f.items;
    expect(a!.story.map((s) => s.sentence.kind)).toEqual(["enter", "enter", "located", "exit", "remark", "move"]);
    expect(a!.parsedQuestion).toEqual({ kind: "first_order", agent: "Ella", object: "spinach" });
    expect(a!.answer).toBe("green_crate");
    expect(a!.line).toBe(7);
    expect(a!.trace).toMatchObject({ rawQuestionType: "first_order_1_tom", questionType: "first_order_tom", storyType: "false_belief", line: 1 });
    expect(b!.line).toBe(14);
    expect(b!.trace!.questionType).toBe("reality");
  });

  it("accepts the corrected variant's location sentences", () => {
    const text = [
      "1 Oliver is in the attic.",
      "2 Ella entered the attic.",
      "3 The box is in the attic.",
      "4 The apple is in the box.",
      "5 Where is the apple really?\tbox\t1",
    ].join("\n");
    const f = parseTomi(text, "c.txt");
    expect(f.items[0]!.story.map((s) => s.sentence)).toEqual([
      { kind: "agents_at", agents: ["Oliver"], room: "attic" },
      { kind: "enter", agent: "Ella", room: "attic" },
      { kind: "located", subject: "box", place: "attic" },
      { kind: "located", subject: "apple", place: "box" },
    ]);
  });

  it("names the file and line of an unknown sentence", () => {
    const bad = ok.replace("4 Ella exited the garage.", "4 Ella teleported to the garage.");
    const err = errorOf(() => parseTomi(bad, "data/x.txt"));
    expect(err.message).toBe('data/x.txt:4: unknown sentence: "Ella teleported to the garage."');
    expect(err.line).toBe(4);
  });

  it("names the line of a question without an answer", () => {
    const bad = ok.replace("\tgreen_crate\t1", "");
    expect(errorOf(() => parseTomi(bad, "x.txt")).message).toMatch(/^x\.txt:7: question without an answer: "Where will Ella look for the spinach\?"/);
  });

  it("rejects a truncated file (a story with no question after it)", () => {
    const cut = ok.split("\n").slice(0, 11).join("\n");
    expect(errorOf(() => parseTomi(cut, "x.txt")).message).toBe("x.txt:11: the file ends inside a story (no question after this line): truncated file?");
    const midLine = ok.slice(0, ok.indexOf("moved the spin") + 14);
    expect(errorOf(() => parseTomi(midLine, "x.txt")).message).toMatch(/^x\.txt:6: unknown sentence/);
  });

  it("rejects broken numbering and a trace that does not match", () => {
    expect(errorOf(() => parseTomi(ok.replace("3 The spinach", "4 The spinach"), "x.txt")).message).toBe("x.txt:3: line number 4 follows 2 (expected 3 or 1)");
    expect(errorOf(() => parseTomi(ok, "x.txt", trace.split("\n")[0]! + "\n", "x.trace")).message).toBe("x.trace:2: 1 trace lines for 2 questions in x.txt");
    expect(errorOf(() => parseTomi(ok, "x.txt", trace.replace("reality", "psychic"), "x.trace")).message).toBe('x.trace:2: unknown question type "psychic"');
  });

  it("finds the trace beside the file, and reads without one", () => {
    const dir = mkdtempSync(join(tmpdir(), "tomi-"));
    writeFileSync(join(dir, "a.txt"), ok);
    expect(readTomiFile(join(dir, "a.txt")).traceFile).toBeUndefined();
    writeFileSync(join(dir, "a.trace"), trace);
    expect(readTomiFile(join(dir, "a.txt")).items[0]!.trace?.storyType).toBe("false_belief");
    expect(errorOf(() => readTomiFile(join(dir, "missing.txt"))).message).toBe(`${join(dir, "missing.txt")}: file not found`);
  });
});

describe("ToMi bAbI reader on repeated stories", () => {
  it("shares one story between the questions of consecutive identical blocks, and still catches truncation there", () => {
    const f = parseTomi(ok, "x.txt");
    expect(f.items[0]!.story).toBe(f.items[1]!.story);
    const cut = ok + STORY.slice(0, 3).join("\n") + "\n";
    expect(() => parseTomi(cut, "x.txt")).toThrow("x.txt:17: the file ends inside a story");
  });

  it("reads a block that differs from the previous one in one line line by line, reusing the lines that repeat", () => {
    const changed = [...STORY.slice(0, 5), "6 Avery moved the spinach to the blue_bucket.", "7 Where is the spinach really?\tblue_bucket\t1"];
    const f = parseTomi(ok + changed.join("\n") + "\n", "x.txt");
    const [, b, c] = f.items;
    expect(c!.line).toBe(21);
    expect(c!.story).not.toBe(b!.story);
    expect(c!.story.slice(0, 5)).toEqual(b!.story.slice(0, 5));
    expect(c!.story[0]).toBe(b!.story[0]);
    expect(c!.story[5]!.fileLine).toBe(20);
    expect(c!.story[5]!.sentence).toEqual({ kind: "move", agent: "Avery", object: "spinach", container: "blue_bucket" });
  });

  it("keeps every question of a block that asks twice, when the whole block repeats", () => {
    const block = [...STORY, "7 Where is the spinach really?\tgreen_treasure_chest\t1", "8 Ella entered the garage.", "9 Where will Ella look for the spinach?\tgreen_treasure_chest\t1"];
    const f = parseTomi([...block, ...block].join("\n") + "\n", "x.txt");
    expect(f.items.map((it) => [it.line, it.story.length])).toEqual([
      [7, 6],
      [9, 7],
      [16, 6],
      [18, 7],
    ]);
    expect(f.items[3]!.story.map((l) => l.text)).toEqual(f.items[1]!.story.map((l) => l.text));
  });
});

/**
 * A ToMi answer names a container of its story, and a question asks about an object and agents
 * the story has: an answer cut short ("red_su", a truncated file), garbled or foreign, or a
 * question about someone or something the story never mentions, is bad input naming the line;
 * it is never scored against.
 */
const file = (question: string) => [...STORY, `7 ${question}`].join("\n") + "\n";

describe("ToMi answers and question entities", () => {
  it("reads answers that name a container of the story (either container, any case, a leading 'the')", () => {
    for (const a of ["green_crate", "green_treasure_chest", "Green_Crate", "the green_crate"]) {
      expect(parseTomi(file(`Where will Ella look for the spinach?\t${a}\t1`), "x.txt").items[0]!.answer).toBe(a);
    }
  });

  it("refuses an answer cut short, garbled or not of the story, naming the line", () => {
    for (const a of ["green_cr", "green_", "zorblax", "green_crate\uFFFD", "garage", "spinach", "green_crate" + "x".repeat(1000)]) {
      const err = errorOf(() => parseTomi(file(`Where will Ella look for the spinach?\t${a}\t1`), "x.txt"));
      expect(err.line, a).toBe(7);
      expect(err.message, a).toMatch(/^x\.txt:7: answer ".*" is not a container of the story/);
      expect(err.message.length, a).toBeLessThan(200);
    }
  });

  it("refuses a question about an object or an agent the story never mentions", () => {
    expect(errorOf(() => parseTomi(file("Where is the zorblax really?\tgreen_crate\t1"), "x.txt")).message).toBe(
      "x.txt:7: the story never mentions the zorblax",
    );
    expect(errorOf(() => parseTomi(file("Where will Quuxby look for the spinach?\tgreen_crate\t1"), "x.txt")).message).toBe(
      "x.txt:7: the story never mentions Quuxby",
    );
    expect(errorOf(() => parseTomi(file("Where does Ella think that Zed searches for the spinach?\tgreen_crate\t1"), "x.txt")).message).toBe(
      "x.txt:7: the story never mentions Zed",
    );
  });
});
