import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseHitom, readHitomFile } from "../../worlds/hitom/dataset.js";
import { errorOf } from "../data-error.js";

const STORY = [
  "1 Ella, Avery and Mia entered the attic.",
  "2 The onion is in the red_box.",
  "3 Ella moved the onion to the blue_crate.",
  "4 Ella exited the attic.",
  "5 Avery made no movements and stayed in the attic for 1 minute.",
  "6 Avery exited the attic.",
  "7 Mia saw a cat.",
  "8 Mia moved the onion to the green_basket.",
  "9 Mia exited the attic.",
  "10 Ella, Avery and Mia entered the waiting_room.",
  "11 Avery publicly claimed that onion is in the red_box.",
  "12 Mia privately told Ella that the onion is in the green_basket.",
].join("\n") + "\n\n";
const VP_LINE = "Read the following story and answer the multiple-choice question. Please provide answer without explanations.";

function entries(): Record<string, unknown>[] {
  return [
    {
      prompting_type: "CoTP",
      deception: true,
      story_length: 1,
      question_order: 1,
      sample_id: 600,
      story: STORY,
      question: "Where does Ella really think the onion is?",
      choices: "A. red_box, B. blue_crate, C. green_basket",
      answer: "green_basket",
    },
    {
      prompting_type: "VP",
      deception: true,
      story_length: 1,
      question_order: 2,
      sample_id: 900,
      story: `${VP_LINE}\n${STORY}`,
      question: "Where does Ella think Avery thinks the onion is?",
      choices: "A. red_box, B. blue_crate, C. green_basket",
      answer: "red_box",
    },
  ];
}

const json = (data: unknown) => JSON.stringify({ data }, null, 1);

describe("Hi-ToM reader (upstream Hi-ToM_data.json)", () => {
  it("reads both prompting types: the VP instruction line apart, the same story underneath", () => {
    const [cotp, vp] = parseHitom(json(entries()), "data/x.json");
    expect(cotp).toMatchObject({ id: "x.json#0", index: 0, field: "data[0]", question: { agents: ["Ella"], object: "onion" } });
    expect(cotp!.choices).toEqual(["red_box", "blue_crate", "green_basket"]);
    expect(cotp!.story.text.instruction).toBeUndefined();
    expect(vp).toMatchObject({ id: "x.json#1", field: "data[1]", question: { agents: ["Ella", "Avery"], object: "onion" } });
    expect(vp!.story.text.instruction).toBe(VP_LINE);
    expect(vp!.story.body).toBe(cotp!.story.body);
    expect(cotp!.story.text.sentences.map((s) => s.sentence.kind)).toEqual([
      "enter", "located", "move", "exit", "stay", "exit", "remark", "move", "exit", "enter", "public_claim", "private_claim",
    ]);
    // Lines count in the story text, the VP instruction included.
    expect(vp!.story.text.sentences[0]!.line).toBe(2);
    expect(cotp!.story.scenario.init.agents).toEqual(["Ella", "Avery", "Mia"]);
    expect(cotp!.story.scenario.init.containerRoom).toEqual({ red_box: "attic", blue_crate: "attic", green_basket: "attic" });
  });

  it("names the file and line of malformed JSON (a truncated file)", () => {
    const text = json(entries());
    const cut = text.slice(0, text.indexOf('"question": "Where does Ella think'));
    const err = errorOf(() => parseHitom(cut, "x.json"));
    expect(err.message).toMatch(/^x\.json:\d+: invalid JSON: /);
    expect(err.line).toBe(cut.split("\n").length);
  });

  it("names the field of a wrong JSON shape", () => {
    const missing = entries();
    delete missing[1]!.answer;
    expect(errorOf(() => parseHitom(json(missing), "x.json")).message).toBe("x.json (data[1].answer): Invalid input: expected string, received undefined");
    const wrongType = entries();
    wrongType[0]!.question_order = "1";
    const err = errorOf(() => parseHitom(json(wrongType), "x.json"));
    expect(err.field).toBe("data[0].question_order");
    expect(err.message).toBe("x.json (data[0].question_order): Invalid input: expected number, received string");
    const extra = entries();
    extra[1]!.label = "red_box";
    expect(errorOf(() => parseHitom(json(extra), "x.json")).message).toMatch(/^x\.json \(data\[1\]\): Unrecognized key: "label"/);
    // A FANToM file (an array) given as Hi-ToM: the top level is at fault, and the message says so.
    expect(errorOf(() => parseHitom(JSON.stringify(entries()), "x.json")).message).toBe('x.json (top level): expected an object with a "data" array of questions, got an array');
    expect(errorOf(() => parseHitom(JSON.stringify({ data: entries(), version: 2 }), "x.json")).message).toMatch(/^x\.json \(top level\): Unrecognized key: "version"/);
    expect(errorOf(() => parseHitom("null", "x.json")).message).toBe('x.json (top level): expected an object with a "data" array of questions, got null');
    expect(errorOf(() => parseHitom(json([]), "x.json")).message).toBe("x.json (data): no entries");
    const badType = entries();
    badType[0]!.prompting_type = "CoT";
    expect(errorOf(() => parseHitom(json(badType), "x.json")).field).toBe("data[0].prompting_type");
  });

  it("names the entry and story line of an unknown sentence", () => {
    const bad = entries();
    bad[1]!.story = (bad[1]!.story as string).replace("4 Ella exited the attic.", "4 Ella teleported to the attic.");
    const err = errorOf(() => parseHitom(json(bad), "data/x.json"));
    expect(err.message).toBe('data/x.json (data[1].story line 5): unknown sentence: "Ella teleported to the attic."');
    expect(err.field).toBe("data[1].story line 5");
  });

  it("checks the story, question, choices and answer against each other", () => {
    const check = (edit: (e: Record<string, unknown>[]) => void) => {
      const e = entries();
      edit(e);
      return errorOf(() => parseHitom(json(e), "x.json")).message;
    };
    expect(check((e) => (e[0]!.answer = "green_box"))).toBe('x.json (data[0].answer): "green_box" is not one of the choices');
    expect(check((e) => (e[0]!.question_order = 3))).toBe(
      'x.json (data[0].question_order): 3, but "Where does Ella really think the onion is?" is of order 1',
    );
    expect(check((e) => (e[0]!.question = "Who is Ella?"))).toBe('x.json (data[0].question): unknown question: "Who is Ella?"');
    expect(check((e) => (e[0]!.question = "Where does Noah really think the onion is?"))).toBe("x.json (data[0].question): the story never mentions Noah");
    const badChoices = (choices: string) => `x.json (data[0].choices): expected "A. <option>, B. <option>, ..." with one-word options (places as the story writes them), got "${choices}"`;
    expect(check((e) => (e[0]!.choices = "A. red_box, C. blue_crate"))).toBe(badChoices("A. red_box, C. blue_crate"));
    // A list cut short: after a comma, inside the next letter, after it.
    for (const cut of ["A. red_box, B. blue_crate,", "A. red_box, B. blue_crate, C", "A. red_box, B. blue_crate, C."]) {
      expect(check((e) => (e[0]!.choices = cut))).toBe(badChoices(cut));
    }
    expect(check((e) => (e[1]!.story = STORY))).toBe("x.json (data[1].story): a VP story starts with an instruction line");
    expect(check((e) => (e[0]!.story = STORY.replace("3 Ella moved", "4 Ella moved")))).toBe(
      "x.json (data[0].story line 3): sentence number 4 where 3 was expected",
    );
    expect(check((e) => (e[0]!.story = STORY.replace("9 Mia exited the attic.", "9 Mia exited the hall.")))).toBe(
      "x.json (data[0].story line 9): Mia is in the attic, not the hall",
    );
    expect(check((e) => (e[0]!.story = STORY.replace("2 The onion is in the red_box.", "2 Mia lost his watch.")))).toBe(
      "x.json (data[0].story line 3): the onion is moved before the story says where it is",
    );
  });

  it("reads a file from disk and names a missing one", () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-"));
    writeFileSync(join(dir, "a.json"), json(entries()));
    expect(readHitomFile(join(dir, "a.json"))).toHaveLength(2);
    expect(errorOf(() => readHitomFile(join(dir, "missing.json"))).message).toBe(`${join(dir, "missing.json")}: file not found`);
  });
});
