/**
 * The context a policy writes itself in simulation mode (`context=self`) for Hi-ToM: the trace of
 * the asked object (who saw it where, who left it, who was told where and believed it), the rules
 * that read every order's answer off it, the trust rule that reads a claim's believers off the
 * lines before it, the reply's grammar, the SFT example, and bench's fidelity score.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { askedQuestion, replyFor } from "../../agents/policy/question-prompt.js";
import { writtenSpec } from "../../agents/policy/action-grammar.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { writtenFidelity } from "../../benchmarks/written-fidelity.js";
import { sftExample } from "../../measurements/learn-recipe.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { compileBytes } from "../../models/grammar/index.js";
import { citedAnswer } from "../../worlds/core/compact-context.js";
import type { Agent } from "../../worlds/core/agent.js";
import { writtenReply, writtenTrace } from "../../worlds/core/written-context.js";
import { HitomBenchmark } from "../../worlds/hitom/benchmark.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { simulateHitom } from "../../worlds/hitom/simulation.js";
import { writtenHitomContext } from "../../worlds/hitom/written-context.js";
import type { Answer } from "../../worlds/question/world.js";
import { untrainedWriter } from "../policy/untrained-writer.js";
import { TOM_DATA, tomData } from "../data-paths.js";
import { readHitomTrace, readLine, trustDisagreement } from "./trace-reader.js";

const story = (...lines: string[]) => lines.map((l, i) => `${i + 1} ${l}`).join("\n");

/** Ava leaves first, Noah moves the carrot and leaves, Liam stays last; then two claims, one of them a lie. */
const CLAIMS = story(
  "Ava, Noah and Liam entered the attic.",
  "The carrot is in the red_box.",
  "Ava exited the attic.",
  "Noah moved the carrot to the blue_crate.",
  "Noah exited the attic.",
  "Liam made no movements and stayed in the attic for 1 minute.",
  "Liam exited the attic.",
  "Ava, Noah and Liam entered the waiting_room.",
  "Noah publicly claimed that carrot is in the green_drawer.",
  "Ava privately told Liam that the carrot is in the red_box.",
);

async function written(s: string, question: string) {
  return writtenHitomContext(await simulateHitom(s), question);
}

function jsonFile(entries: readonly { story: string; question: string; answer: string; order: number }[]): string {
  const dir = mkdtempSync(join(tmpdir(), "hitom-written-"));
  const file = join(dir, "one.json");
  const choices = "A. red_box, B. blue_crate, C. green_drawer";
  const data = entries.map((e, i) => ({ prompting_type: "CoTP", deception: true, story_length: 1, question_order: e.order, sample_id: i, story: `${e.story}\n\n`, question: e.question, choices, answer: e.answer }));
  writeFileSync(file, JSON.stringify({ data }));
  return file;
}

describe("the written context (Hi-ToM)", () => {
  it("traces the asked object: sightings, exits, claims with who believed them, then the answer line", async () => {
    const w = await written(CLAIMS, "Where does Ava really think the carrot is?");
    expect(w.trace).toEqual([
      "red_box Ava Noah Liam",
      "red_box Noah Liam",
      "blue_crate Noah Liam",
      "blue_crate Liam",
      "blue_crate",
      // Ava left before Noah (she trusts him), Liam after (he does not).
      "green_drawer Ava from Noah not Liam",
      // Liam stayed after Ava: he does not trust her.
      "red_box from Ava not Liam",
    ]);
    expect(w.heading).toBe("Who saw the carrot where and who was told where, then the answer:");
    expect(writtenReply(w)).toBe(`${w.trace.join("\n")}\n- Ava carrot:\ngreen_drawer`);
    const answers: [string, string][] = [
      ["Where is the carrot really?", "blue_crate"],
      ["Where does Ava really think the carrot is?", "green_drawer"],
      ["Where does Liam really think the carrot is?", "blue_crate"],
      ["Where does Noah really think the carrot is?", "blue_crate"],
      // Ava believed Noah; Noah thinks Liam believed him; Ava thinks Liam believed her.
      ["Where does Ava think Noah thinks the carrot is?", "green_drawer"],
      ["Where does Noah think Liam thinks the carrot is?", "green_drawer"],
      ["Where does Ava think Liam thinks the carrot is?", "red_box"],
      ["Where does Liam think Ava thinks the carrot is?", "red_box"],
      ["Where does Liam think Noah thinks the carrot is?", "blue_crate"],
      ["Where does Liam think Noah thinks Ava thinks the carrot is?", "red_box"],
    ];
    for (const [q, label] of answers) {
      const w = await written(CLAIMS, q);
      expect(w.answer?.value, q).toBe(label);
      expect(readHitomTrace(w.trace, q), q).toBe(label);
    }
    expect(trustDisagreement(w.trace)).toBeUndefined();
  });

  it("latest first: the same lines reversed, read by the first line that gives the view", async () => {
    const ctx = await simulateHitom(CLAIMS);
    const q = "Where does Ava think Liam thinks the carrot is?";
    const latest = writtenHitomContext(ctx, q, "latest");
    const inOrder = writtenHitomContext(ctx, q);
    expect(latest.trace).toEqual([...inOrder.trace].reverse());
    expect(latest.heading).toBe("Who saw the carrot where and who was told where, latest first, then the answer:");
    expect(latest.answer).toEqual(inOrder.answer);
    expect(latest.pattern).toBe(inOrder.pattern);
    expect(readHitomTrace(latest.trace, q, "latest")).toBe("red_box");
  });

  it("reads claim lines back: believers, speaker, doubters", () => {
    expect(readLine("green_drawer Ava from Noah not Liam")).toEqual({ place: "green_drawer", by: ["Ava"], claim: { speaker: "Noah", doubters: ["Liam"] } });
    expect(readLine("red_box Ava Liam")).toEqual({ place: "red_box", by: ["Ava", "Liam"] });
    // A believer named where the trust rule says the hearer doubts is caught.
    expect(trustDisagreement(["red_box Ava Noah", "red_box Noah", "green_drawer Noah from Ava"])).toBe('line 3 "green_drawer Noah from Ava": Noah');
  });

  it("reads claims made inside the object's room too: every hearer is there with it (a private claim's listener is in the speaker's room), so on the last line, and doubts", async () => {
    // Neither the generator nor the dev file makes a claim there (they talk in the waiting_room); a story file may.
    const inRoom = [
      story(
        "Ava, Noah and Liam entered the attic.",
        "The carrot is in the red_box.",
        "Ava exited the attic.",
        "Noah privately told Liam that the carrot is in the green_drawer.",
        "Liam exited the attic.",
        "Noah exited the attic.",
        "Ava, Noah and Liam entered the waiting_room.",
        "Ava publicly claimed that carrot is in the blue_box.",
      ),
      story(
        "Ava, Noah and Liam entered the attic.",
        "The carrot is in the red_box.",
        "Ava exited the attic.",
        "Noah publicly claimed that carrot is in the green_drawer.",
        "Noah exited the attic.",
        "Ava entered the attic.",
        "Liam privately told Ava that the carrot is in the blue_box.",
        "Liam exited the attic.",
        "Ava exited the attic.",
        "Ava, Noah and Liam entered the waiting_room.",
        "Noah privately told Ava that the carrot is in the blue_box.",
      ),
    ];
    const names = ["Ava", "Noah", "Liam"];
    const questions = ["Where is the carrot really?"];
    for (const a of names) {
      questions.push(`Where does ${a} really think the carrot is?`);
      for (const b of names.filter((n) => n !== a)) {
        questions.push(`Where does ${a} think ${b} thinks the carrot is?`);
        for (const c of names.filter((n) => n !== a && n !== b)) questions.push(`Where does ${a} think ${b} thinks ${c} thinks the carrot is?`);
      }
    }
    for (const s of inRoom) {
      const ctx = await simulateHitom(s);
      for (const q of questions) {
        const w = writtenHitomContext(ctx, q);
        expect(readHitomTrace(w.trace, q), q).toBe(w.answer?.value);
        expect(trustDisagreement(w.trace), q).toBeUndefined();
      }
    }
    expect((await written(inRoom[1]!, "Where is the carrot really?")).trace).toContain("blue_box from Liam not Ava");
  });

  /** Questions whose reply cites the world model's label, whose label the rules read off the trace, and whose claim lines the trust rule reads. */
  async function everyAnswerOnTheTrace(file: string): Promise<{ agree: number; read: number; latest: number; trust: number; claims: number; total: number }> {
    const bench = new HitomBenchmark();
    let agree = 0;
    let read = 0;
    let latest = 0;
    let trust = 0;
    let claims = 0;
    const items = bench.load(file);
    for (const item of items) {
      const label = String((await bench.groundTruth(item)).label);
      const task = bench.task(item, "simulation");
      const asked = await askedQuestion(task, "self");
      const reply = replyFor(asked, item.question, label);
      if (reply !== undefined && citedAnswer(reply) === label) agree++;
      if (readHitomTrace(asked.written!.trace, item.question) === label) read++;
      const reversed = (await askedQuestion(task, "self-latest")).written!.trace;
      if (readHitomTrace(reversed, item.question, "latest") === label) latest++;
      if (trustDisagreement(asked.written!.trace) === undefined) trust++;
      if (asked.written!.trace.some((l) => l.includes(" from "))) claims++;
      // The grammar the policy writes under takes the reply SFT teaches.
      if (reply !== undefined) expect(reply).toMatch(new RegExp(asked.written!.pattern));
    }
    return { agree, read, latest, trust, claims, total: items.length };
  }

  it("holds the world model's answer to every generated question of orders 0-4, read off the trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-written-"));
    writeFileSync(join(dir, "gen.json"), (await generateHitom(300, 7)).json);
    const r = await everyAnswerOnTheTrace(join(dir, "gen.json"));
    expect(r).toMatchObject({ agree: 300, read: 300, latest: 300, trust: 300, total: 300 });
    // Half the stories are deception stories: claims are on their traces.
    expect(r.claims).toBeGreaterThan(100);
  });

  it.skipIf(!TOM_DATA)("holds the world model's answer to every question of the Hi-ToM dev file", async () => {
    const r = await everyAnswerOnTheTrace(tomData("hitom", "Hi-ToM_dev.json"));
    expect(r).toMatchObject({ agree: 234, read: 234, latest: 234, trust: 234, total: 234 });
  });

  it("the grammar accepts the world model's reply and refuses names and places the story does not hold", async () => {
    const w = await written(CLAIMS, "Where does Liam think Noah thinks Ava thinks the carrot is?");
    const a = compileBytes(writtenSpec(w, "schema")!);
    const ok = (t: string) => a.matches(new TextEncoder().encode(t));
    expect(writtenReply(w)!.split("\n").slice(-2)).toEqual(["- Liam Noah Ava carrot:", "red_box"]);
    const replies: [string, boolean][] = [
      [writtenReply(w)!, true],
      ["- story carrot:\nblue_crate", true],
      ["red_box Ava from Noah not Liam\n- Ava Noah carrot:\nred_box", true],
      // A room is not a container; a name the story does not hold; another object; a chain naming one agent twice; `not` naming no one.
      ["red_box Ava\n- Ava carrot:\nattic", false],
      ["red_box Ella\n- Ava carrot:\nred_box", false],
      ["red_box Ava\n- Ava apple:\nred_box", false],
      ["red_box Ava\n- Ava Ava carrot:\nred_box", false],
      ["red_box from Ava not\n- Ava carrot:\nred_box", false],
      // A claim nobody heard: the world writes none (the rules would read it as nothing), so the policy may not either.
      ["red_box from Ava\n- Ava carrot:\nred_box", false],
      ["red_box from Ava not Liam\n- Ava carrot:\nred_box", true],
    ];
    expect(replies.map(([t]) => ok(t))).toEqual(replies.map(([, accepted]) => accepted));
  });

  it("the grammar of a three-chapter story with five agents compiles small enough for the decoder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-written-"));
    writeFileSync(join(dir, "gen.json"), (await generateHitom(30, 3)).json);
    const bench = new HitomBenchmark();
    const item = bench.load(join(dir, "gen.json")).find((i) => i.raw.entry.story_length === 3 && i.raw.entry.question_order === 4)!;
    const asked = await askedQuestion(bench.task(item, "simulation"), "self");
    const a = compileBytes(writtenSpec(asked.written!, "schema")!, { explicitStates: 5_000 });
    expect(a.matches(new TextEncoder().encode(writtenReply(asked.written!)!))).toBe(true);
  });

  it("teaches, as an SFT example, the story and question, then the trace and the answer line", async () => {
    const bench = new HitomBenchmark();
    const q = "Where does Noah think Liam thinks the carrot is?";
    const [item] = bench.load(jsonFile([{ story: CLAIMS, question: q, answer: "green_drawer", order: 2 }]));
    const ex = await sftExample(bench, item!, "simulation", "self");
    expect(ex.prompt).toBe(`Story:\n${CLAIMS}\n\nQuestion: ${q}\nWho saw the carrot where and who was told where, then the answer:`);
    expect(ex.response).toBe(`${(await written(CLAIMS, q)).trace.join("\n")}\n- Noah Liam carrot:\ngreen_drawer`);
    expect((await sftExample(bench, item!, "simulation", "self-latest")).response.split("\n")[0]).toBe("red_box from Ava not Liam");
  });

  it("bench scores a reply's trace against the world model's, in the order the agent was asked", async () => {
    const bench = new HitomBenchmark();
    const q = "Where does Ava really think the carrot is?";
    const [item] = bench.load(jsonFile([{ story: CLAIMS, question: q, answer: "green_drawer", order: 1 }]));
    const task = bench.task(item!, "simulation");
    const gold = (await written(CLAIMS, q)).trace;
    const reply = `${gold.join("\n")}\n- Ava carrot:\ngreen_drawer`;
    expect(writtenTrace(reply)).toEqual(gold);
    expect(await writtenFidelity(task, reply, "self")).toEqual({ exact: true, lines: 7, right: 7 });
    expect(await writtenFidelity(task, reply, "self-latest")).toMatchObject({ exact: false, lines: 7 });
    const replying = (raw: string, context: string): Agent<Answer> => ({ id: "fixed", act: () => ({ action: { answer: citedAnswer(raw) }, raw, info: { context } }) });
    const [result] = await runBenchmark({ benchmark: bench, items: [item!], agent: replying(reply.replace("green_drawer Ava from Noah", "green_drawer from Noah"), "self"), mode: "simulation" });
    expect(result!.writtenContext).toEqual({ exact: false, lines: 7, right: 6 });
    expect(result!.correct).toBe(true);
  });

  it("GRPO asks the written-context prompt and scores the trace against the world model's", async () => {
    const q = "Where does Ava really think the carrot is?";
    const points = await BenchPoints.open("hitom", jsonFile([{ story: CLAIMS, question: q, answer: "green_drawer", order: 1 }]), "simulation", { context: "self" });
    const p = await points.point(0);
    expect(JSON.stringify(p.messages)).toContain("Who saw the carrot where and who was told where, then the answer:");
    const gold = (await written(CLAIMS, q)).trace.join("\n");
    expect(p.trace!(`${gold}\n- Ava carrot:\ngreen_drawer`)).toBe(1);
    expect(p.trace!(`${gold.replace("green_drawer Ava from Noah", "green_drawer from Noah")}\n- Ava carrot:\ngreen_drawer`)).toBeLessThan(1);
  });

  it("an untrained policy asked with context=self writes a trace and an answer line under the grammar, within its budget", async () => {
    const bench = new HitomBenchmark();
    const q = "Where does Noah think Liam thinks the carrot is?";
    const [item] = bench.load(jsonFile([{ story: CLAIMS, question: q, answer: "green_drawer", order: 2 }]));
    const task = bench.task(item!, "simulation");
    const asked = await askedQuestion(task, "self");
    const ask = await untrainedWriter(task, asked, "self");
    const pattern = new RegExp(asked.written!.pattern);
    for (let t = 1; t <= 3; t++) {
      const reply = await ask(t);
      expect(reply.prompt).toContain(asked.text);
      expect(reply.raw!.trim()).toMatch(pattern);
      expect(["red_box", "blue_crate", "green_drawer"]).toContain(citedAnswer(reply.raw!));
      expect(reply.action).toEqual({ answer: citedAnswer(reply.raw!) });
    }
  });
});
