/**
 * The context a policy writes itself in simulation mode (`context=self`): ToMi's trace of the asked
 * object (who saw it where), the prompt and reply a policy is asked and taught, the reply's grammar,
 * the option that turns it on, and how a written trace is scored against the world model's.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { askedQuestion, replyFor } from "../../agents/policy/question-prompt.js";
import { writtenSpec } from "../../agents/policy/action-grammar.js";
import { parseAgentTarget } from "../../agents/policy/options.js";
import { AgentSpecError } from "../../agents/agent-spec-error.js";
import { writtenContextStat } from "../../benchmarks/written-fidelity.js";
import { compileBytes } from "../../models/grammar/index.js";
import { citedAnswer } from "../../worlds/core/compact-context.js";
import { traceFidelity, writtenReply, writtenTrace } from "../../worlds/core/written-context.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { simulateTomi } from "../../worlds/tomi/simulation.js";
import { writtenTomiContext } from "../../worlds/tomi/written-context.js";
import { TOM_DATA, tomData } from "../data-paths.js";
import { untrainedWriter } from "../policy/untrained-writer.js";
import { FALSE_BELIEF, readTrace, story } from "./trace-reader.js";

const written = (s: string, question: string) => writtenTomiContext(simulateTomi(s), question);

describe("the written context (ToMi)", () => {
  it("traces the asked object: who saw it where, then the line the question is answered from", () => {
    const w = written(FALSE_BELIEF, "Where will Ella look for the spinach?");
    expect(w.trace).toEqual(["green_crate Ella Avery", "blue_box Avery"]);
    expect(writtenReply(w)).toBe("green_crate Ella Avery\nblue_box Avery\n- Ella spinach now:\ngreen_crate");
    expect(w.heading).toBe("Who saw the spinach where, then the answer:");
    expect(writtenReply(written(FALSE_BELIEF, "Where will Avery look for the spinach?"))!.split("\n").slice(-2)).toEqual(["- Avery spinach now:", "blue_box"]);
    expect(writtenReply(written(FALSE_BELIEF, "Where is the spinach really?"))!.split("\n").slice(-2)).toEqual(["- story spinach now:", "blue_box"]);
    expect(writtenReply(written(FALSE_BELIEF, "Where was the spinach at the beginning?"))!.split("\n").slice(-2)).toEqual(["- story spinach first:", "green_crate"]);
  });

  it("second order: the last place the two saw it together", () => {
    const s = story(
      "Ella entered the garage.",
      "Avery entered the garage.",
      "The spinach is in the green_crate.",
      "Ella exited the garage.",
      "Avery moved the spinach to the blue_box.",
      "Ella entered the garage.",
      "Avery exited the garage.",
      "Ella moved the spinach to the red_box.",
    );
    const w = written(s, "Where does Avery think that Ella searches for the spinach?");
    // Ella re-enters and sees the blue_box with Avery still there; Avery leaves before the last move.
    expect(w.trace).toEqual(["green_crate Ella Avery", "blue_box Ella Avery", "red_box Ella"]);
    expect(w.answer).toEqual({ title: "both Avery and Ella spinach now", value: "blue_box" });
  });

  it("an agent who left before the move believes the place it saw", () => {
    const s = story(
      "Noah entered the hall.",
      "Ella entered the hall.",
      "The apple is in the red_envelope.",
      "Noah exited the hall.",
      "Ella moved the apple to the green_pantry.",
      "Noah entered the porch.",
    );
    const w = written(s, "Where will Noah look for the apple?");
    expect(w.trace).toEqual(["red_envelope Noah Ella", "green_pantry Ella"]);
    expect(w.answer?.value).toBe("red_envelope");
    expect(readTrace(w.trace, "Where will Noah look for the apple?")).toBe("red_envelope");
  });

  it("traces only the asked object of a story with two", () => {
    const s = story(
      "Ella entered the garage.",
      "The spinach is in the green_crate.",
      "The apple is in the blue_box.",
      "Avery entered the garage.",
      "Ella moved the apple to the green_crate.",
    );
    expect(written(s, "Where is the apple really?").trace).toEqual(["blue_box Ella Avery", "green_crate Ella Avery"]);
    expect(written(s, "Where will Avery look for the spinach?").trace).toEqual(["green_crate Ella Avery"]);
  });

  /** Questions whose reply answers the world model's label, and whose label a reader finds on the trace. */
  async function everyAnswerOnTheTrace(file: string): Promise<{ agree: number; read: number; total: number }> {
    const bench = new TomiBenchmark();
    let agree = 0;
    let read = 0;
    const items = bench.load(file);
    for (const item of items) {
      const label = String((await bench.groundTruth(item)).label);
      const asked = await askedQuestion(bench.task(item, "simulation"), "self");
      const reply = replyFor(asked, item.question, label);
      if (reply !== undefined && citedAnswer(reply) === label) agree++;
      if (readTrace(asked.written!.trace, item.question) === label) read++;
      // The grammar the policy writes under takes the reply SFT teaches.
      if (reply !== undefined) expect(reply).toMatch(new RegExp(asked.written!.pattern));
    }
    return { agree, read, total: items.length };
  }

  it("holds the world model's answer to every generated question, read off the trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "written-"));
    const files = await generateTomi(600, 7, undefined, { plainContainers: 0.5, placedContainers: 0.5 });
    writeFileSync(join(dir, "gen.txt"), files.txt);
    writeFileSync(join(dir, "gen.trace"), files.trace);
    expect(await everyAnswerOnTheTrace(join(dir, "gen.txt"))).toEqual({ agree: 600, read: 600, total: 600 });
  });

  it.skipIf(!TOM_DATA)("holds every ParaphrasedToMi answer (the world model reads the reworded sentences)", async () => {
    expect(await everyAnswerOnTheTrace(tomData("tomi", "paraphrased_symbolictom", "val_600.txt"))).toEqual({ agree: 600, read: 600, total: 600 });
  });

  it("asks the story and the question, and reads the answer and the trace back from the reply", async () => {
    const bench = new TomiBenchmark();
    const dir = mkdtempSync(join(tmpdir(), "written-"));
    writeFileSync(join(dir, "one.txt"), `${FALSE_BELIEF}\n6 Where will Ella look for the spinach?\tgreen_crate\t1\n`);
    const [item] = bench.load(join(dir, "one.txt"));
    const asked = await askedQuestion(bench.task(item!, "simulation"), "self");
    expect(asked.text).toBe(`Story:\n${FALSE_BELIEF}\n\nQuestion: Where will Ella look for the spinach?\nWho saw the spinach where, then the answer:`);
    expect(asked.cited).toBeUndefined();
    const reply = replyFor(asked, item!.question, "green_crate")!;
    expect(citedAnswer(reply)).toBe("green_crate");
    expect(writtenTrace(reply)).toEqual(asked.written!.trace);
    // A label no line gives is not taught.
    expect(replyFor(asked, item!.question, "blue_box")).toBeUndefined();
    // The world's mode asks the compact context, as before.
    expect((await askedQuestion(bench.task(item!, "simulation"))).text.startsWith("Question: ")).toBe(true);
  });

  it("the grammar accepts the world model's reply and refuses a place the story does not hold there", () => {
    const w = written(FALSE_BELIEF, "Where will Ella look for the spinach?");
    const a = compileBytes(writtenSpec(w, "schema")!);
    const ok = (t: string) => a.matches(new TextEncoder().encode(t));
    expect(ok(writtenReply(w)!)).toBe(true);
    expect(ok("- Ella spinach now:\ngreen_crate")).toBe(true);
    expect(ok("green_crate Ella Avery\nblue_box Avery\n- Ella spinach now:\nred_box")).toBe(false);
    // A room is a place, not a container: no answer.
    expect(ok("- Ella spinach now:\ngarage")).toBe(false);
    expect(ok("green_crate Noah\n- Ella spinach now:\ngreen_crate")).toBe(false);
    expect(ok("green_crate Ella Avery\n- Ella apple now:\ngreen_crate")).toBe(false);
    expect(ok("- both Avery and Ella spinach now:\ngreen_crate")).toBe(true);
    expect(ok("- both Ella and Ella spinach now:\ngreen_crate")).toBe(false);
    expect(writtenSpec(w, "off")).toBeUndefined();
  });

  it("the grammar of a 30-line story with seven agents stays small (the trace's length is the token budget's to bound)", () => {
    const agents = ["Ella", "Avery", "Noah", "Jacob", "Olivia", "Mason", "Charlotte"];
    const containers = ["blue_box", "red_envelope", "green_treasure_chest", "blue_bathtub", "red_drawer", "green_suitcase", "blue_cupboard"];
    const lines = [...agents.map((a) => `${a} entered the garage.`), "The spinach is in the green_crate.", "The apple is in the blue_box."];
    for (let k = 0; lines.length < 30; k++) {
      const a = agents[k % agents.length]!;
      if (k % 2) lines.push(`${a} exited the garage.`, `${a} entered the garage.`);
      else lines.push(`${a} moved the spinach to the ${containers[k % containers.length]}.`);
    }
    const w = written(story(...lines.slice(0, 30)), "Where does Ella think that Noah searches for the spinach?");
    expect(w.trace.length).toBeGreaterThan(5);
    // A bound of a line per timestep, nested over the names' bound, multiplied the automaton's states by the story's length.
    const a = compileBytes(writtenSpec(w, "schema")!, { explicitStates: 2_000 });
    expect(a.matches(new TextEncoder().encode(writtenReply(w)!))).toBe(true);
  });

  it("an untrained policy asked with context=self writes a trace and an answer line under the grammar, and says so in its reply's info", async () => {
    const bench = new TomiBenchmark();
    const dir = mkdtempSync(join(tmpdir(), "written-"));
    writeFileSync(join(dir, "one.txt"), `${FALSE_BELIEF}\n6 Where will Ella look for the spinach?\tgreen_crate\t1\n`);
    const [item] = bench.load(join(dir, "one.txt"));
    const task = bench.task(item!, "simulation");
    const asked = await askedQuestion(task, "self");
    const ask = await untrainedWriter(task, asked, "self");
    const pattern = new RegExp(asked.written!.pattern);
    for (let t = 1; t <= 8; t++) {
      const reply = await ask(t);
      expect(reply.prompt).toContain(asked.text);
      expect(reply.raw!.trim()).toMatch(pattern);
      expect(reply.info).toMatchObject({ context: "self" });
      expect(["green_crate", "blue_box"]).toContain(citedAnswer(reply.raw!));
      expect(reply.action).toEqual({ answer: citedAnswer(reply.raw!) });
    }
  });

  it("parses context=self, defaults to the world's, and names the option it refuses", () => {
    expect(parseAgentTarget("policy:m", "m?context=self").options.context).toBe("self");
    expect(parseAgentTarget("policy:m", "m").options.context).toBe("world");
    expect(() => parseAgentTarget("policy:m", "m?context=policy")).toThrow(AgentSpecError);
    expect(() => parseAgentTarget("policy:m", "m?context=policy")).toThrow(/^policy:m: context: /);
  });

  it("scores written traces: exact ones, and lines right at their place", () => {
    expect(traceFidelity(["a X", "b Y"], ["a X", "b Y"])).toEqual({ exact: true, lines: 2, right: 2 });
    expect(traceFidelity(["a X", "c Y", "d"], ["a X", "b Y"])).toEqual({ exact: false, lines: 3, right: 1 });
    expect(traceFidelity([], ["a X"])).toEqual({ exact: false, lines: 1, right: 0 });
    expect(writtenTrace("a X\nb Y\n- Ella o now:\nb\n")).toEqual(["a X", "b Y"]);
    expect(writtenTrace("b")).toEqual([]);
    const stat = writtenContextStat(
      [
        { type: "reality", writtenContext: { exact: true, lines: 2, right: 2 } },
        { type: "memory", writtenContext: { exact: false, lines: 3, right: 1 } },
        { type: "memory", writtenContext: { exact: true, lines: 1, right: 1 } },
        { type: "memory" },
      ],
      ["memory", "reality"],
    );
    expect(stat).toEqual({ questions: 3, exact: 2, exactShare: 2 / 3, lines: 6, linesRight: 4, lineShare: 4 / 6, exactShareByType: { memory: 0.5, reality: 1 } });
    expect(writtenContextStat([{ type: "memory" }], ["memory"])).toBeUndefined();
  });
});
