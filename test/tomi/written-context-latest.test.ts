/**
 * The context a policy writes itself latest first (`context=self-latest`): the world model's trace
 * of the asked object reversed, where every answer is read off the first line naming the agent;
 * the prompt that says the order, the replies SFT teaches, the grammar, bench's fidelity against
 * the reversed trace, and GRPO's points. `context=self` stays as it was.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { askedQuestion, replyFor } from "../../agents/policy/question-prompt.js";
import { parseAgentTarget } from "../../agents/policy/options.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { writtenFidelity } from "../../benchmarks/written-fidelity.js";
import { sftExample } from "../../measurements/learn-recipe.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { citedAnswer } from "../../worlds/core/compact-context.js";
import type { Agent } from "../../worlds/core/agent.js";
import { writtenReply } from "../../worlds/core/written-context.js";
import type { Answer } from "../../worlds/question/world.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { simulateTomi } from "../../worlds/tomi/simulation.js";
import { writtenTomiContext } from "../../worlds/tomi/written-context.js";
import { TOM_DATA, tomData } from "../data-paths.js";
import { untrainedWriter } from "../policy/untrained-writer.js";
import { FALSE_BELIEF, readTrace } from "./trace-reader.js";

function oneQuestionFile(question: string, label: string): string {
  const dir = mkdtempSync(join(tmpdir(), "written-latest-"));
  const file = join(dir, "one.txt");
  writeFileSync(file, `${FALSE_BELIEF}\n6 ${question}\t${label}\t1\n`);
  return file;
}

describe("the written context latest first (ToMi)", () => {
  it("writes the story-order trace reversed, says the order in its heading, and answers from the same line", () => {
    const ctx = simulateTomi(FALSE_BELIEF);
    const q = "Where will Ella look for the spinach?";
    const latest = writtenTomiContext(ctx, q, "latest");
    const inOrder = writtenTomiContext(ctx, q);
    expect(latest.trace).toEqual(["blue_box Avery", "green_crate Ella Avery"]);
    expect(inOrder.trace).toEqual(["green_crate Ella Avery", "blue_box Avery"]);
    expect(latest.heading).toBe("Who saw the spinach where, latest first, then the answer:");
    expect(inOrder.heading).toBe("Who saw the spinach where, then the answer:");
    expect(latest.answer).toEqual(inOrder.answer);
    expect(latest.pattern).toBe(inOrder.pattern);
    expect(writtenReply(latest)).toBe("blue_box Avery\ngreen_crate Ella Avery\n- Ella spinach now:\ngreen_crate");
    // Avery's true belief, the type a story-order policy misses: the first line naming Avery.
    expect(readTrace(writtenTomiContext(ctx, "Where will Avery look for the spinach?", "latest").trace, "Where will Avery look for the spinach?", "latest")).toBe("blue_box");
  });

  /** Questions whose latest-first reply answers the world model's label, and whose label the first-line rule finds on the trace. */
  async function everyAnswerOnTheTrace(file: string): Promise<{ agree: number; read: number; reversed: number; total: number }> {
    const bench = new TomiBenchmark();
    let agree = 0;
    let read = 0;
    let reversed = 0;
    const items = bench.load(file);
    for (const item of items) {
      const label = String((await bench.groundTruth(item)).label);
      const task = bench.task(item, "simulation");
      const asked = await askedQuestion(task, "self-latest");
      const reply = replyFor(asked, item.question, label);
      if (reply !== undefined && citedAnswer(reply) === label) agree++;
      if (readTrace(asked.written!.trace, item.question, "latest") === label) read++;
      if (JSON.stringify(asked.written!.trace) === JSON.stringify([...(await askedQuestion(task, "self")).written!.trace].reverse())) reversed++;
      if (reply !== undefined) expect(reply).toMatch(new RegExp(asked.written!.pattern));
    }
    return { agree, read, reversed, total: items.length };
  }

  it("holds the world model's answer to every generated question, read off the first line naming the agent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "written-latest-"));
    const files = await generateTomi(600, 7, undefined, { plainContainers: 0.5, placedContainers: 0.5 });
    writeFileSync(join(dir, "gen.txt"), files.txt);
    writeFileSync(join(dir, "gen.trace"), files.trace);
    expect(await everyAnswerOnTheTrace(join(dir, "gen.txt"))).toEqual({ agree: 600, read: 600, reversed: 600, total: 600 });
  });

  it.skipIf(!TOM_DATA)("holds every ParaphrasedToMi answer latest first", async () => {
    expect(await everyAnswerOnTheTrace(tomData("tomi", "paraphrased_symbolictom", "val_600.txt"))).toEqual({ agree: 600, read: 600, reversed: 600, total: 600 });
  });

  it("is an agent option beside self: the policy is asked latest first, and its reply's info names the order", async () => {
    expect(parseAgentTarget("policy:m", "m?context=self-latest").options.context).toBe("self-latest");
    expect(parseAgentTarget("policy:m", "m?context=self").options.context).toBe("self");
    const bench = new TomiBenchmark();
    const [item] = bench.load(oneQuestionFile("Where will Ella look for the spinach?", "green_crate"));
    const task = bench.task(item!, "simulation");
    const asked = await askedQuestion(task, "self-latest");
    const reply = await (await untrainedWriter(task, asked, "self-latest"))(1);
    expect(reply.prompt).toContain(asked.text);
    expect(reply.prompt).toContain("latest first, then the answer:");
    expect(reply.raw!.trim()).toMatch(new RegExp(asked.written!.pattern));
    expect(reply.info).toMatchObject({ context: "self-latest" });
  });

  it("teaches, as an SFT example, the prompt the agent is asked and the reversed trace, then the answer line", async () => {
    const bench = new TomiBenchmark();
    const [item] = bench.load(oneQuestionFile("Where will Avery look for the spinach?", "blue_box"));
    const ex = await sftExample(bench, item!, "simulation", "self-latest");
    expect(ex.prompt).toBe(`Story:\n${FALSE_BELIEF}\n\nQuestion: Where will Avery look for the spinach?\nWho saw the spinach where, latest first, then the answer:`);
    expect(ex.response).toBe("blue_box Avery\ngreen_crate Ella Avery\n- Avery spinach now:\nblue_box");
    // `self` is taught as before.
    expect((await sftExample(bench, item!, "simulation", "self")).response).toBe("green_crate Ella Avery\nblue_box Avery\n- Avery spinach now:\nblue_box");
  });

  it("scores a reply's trace against the trace in the order the agent was asked to write", async () => {
    const bench = new TomiBenchmark();
    const [item] = bench.load(oneQuestionFile("Where will Ella look for the spinach?", "green_crate"));
    const task = bench.task(item!, "simulation");
    const latest = "blue_box Avery\ngreen_crate Ella Avery\n- Ella spinach now:\ngreen_crate";
    const inOrder = "green_crate Ella Avery\nblue_box Avery\n- Ella spinach now:\ngreen_crate";
    expect(await writtenFidelity(task, latest, "self-latest")).toEqual({ exact: true, lines: 2, right: 2 });
    expect(await writtenFidelity(task, inOrder, "self-latest")).toEqual({ exact: false, lines: 2, right: 0 });
    expect(await writtenFidelity(task, inOrder, "self")).toEqual({ exact: true, lines: 2, right: 2 });

    // Bench reads the order off the reply's info, as the policy agent sets it (its `context` option).
    const replying = (raw: string, context: string): Agent<Answer> => ({ id: "fixed", act: () => ({ action: { answer: citedAnswer(raw) }, raw, info: { context } }) });
    const run = async (raw: string, context: string) => (await runBenchmark({ benchmark: bench, items: [item!], agent: replying(raw, context), mode: "simulation" }))[0]!;
    expect((await run(latest, "self-latest")).writtenContext).toEqual({ exact: true, lines: 2, right: 2 });
    expect((await run(latest, "self")).writtenContext).toEqual({ exact: false, lines: 2, right: 0 });
    expect((await run(latest, "world")).writtenContext).toBeUndefined();
  });

  it("GRPO asks the latest-first prompt, scores the reversed trace, and records the order", async () => {
    const file = oneQuestionFile("Where will Ella look for the spinach?", "green_crate");
    const latest = await BenchPoints.open("tomi", file, "simulation", { context: "self-latest" });
    const inOrder = await BenchPoints.open("tomi", file, "simulation", { context: "self" });
    const p = await latest.point(0);
    expect(JSON.stringify(p.messages)).toContain("latest first, then the answer:");
    expect(p.trace!("blue_box Avery\ngreen_crate Ella Avery\n- Ella spinach now:\ngreen_crate")).toBe(1);
    expect(p.trace!("green_crate Ella Avery\nblue_box Avery\n- Ella spinach now:\ngreen_crate")).toBe(0);
    expect(latest.runParams).toMatchObject({ context: "self-latest" });
    expect(latest.dataId).not.toBe(inOrder.dataId);
    expect(latest.description).toContain("latest first");
  });
});
