/**
 * A policy answers usersim in the tagged reply's own grammar: the benchmark's tasks carry the
 * reply's text pattern (replyTextPattern), under which the policy agent (`constrain=schema`, the
 * default) and GRPO's rollouts sample, so every reply parses as the hierarchy. The free answer's
 * grammar (one line of text) could not write the layout SFT teaches (each tag on its own line),
 * and a policy sampled under it was never well-formed.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { actionConstraint, actionSpec } from "../../agents/policy/action-grammar.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { AnswerSchema, answerGrammarSchema } from "../../worlds/question/world.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { simulationAnswer, UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { DEFAULT_HIERARCHY, maxChars, RESPONSE_ONLY_HIERARCHY } from "../../worlds/usersim/hierarchy.js";
import { renderReply, replyTextPattern } from "../../worlds/usersim/reply.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import type { ConstraintSpec } from "../../models/grammar/index.js";
import { tempDir, tinyCheckpoint } from "../policy/fixtures.js";

const io = captureOutput();

function data(n: number, seed: number): string {
  const file = join(mkdtempSync(join(tmpdir(), "sw-usersim-grammar-")), "g.jsonl");
  writeFileSync(file, generateUsersim(n, seed).jsonl);
  return file;
}

/** A regex spec's pattern, as a RegExp writes it (zod's JSON Schema escapes its slashes). */
function regexOf(spec: ConstraintSpec | undefined): string | undefined {
  return spec?.type === "regex" ? new RegExp(spec.pattern).source : undefined;
}

describe("usersim under constrained decoding", () => {
  it("asks for the tagged reply's pattern, whose grammar takes the ground truth's tokens (the free answer's does not)", async () => {
    const file = data(12, 4);
    const { tokenizer } = await tinyCheckpoint(2);
    for (const h of [DEFAULT_HIERARCHY, RESPONSE_ONLY_HIERARCHY]) {
      const b = new UsersimBenchmark({ hierarchy: h });
      const [item] = await b.load(file);
      const task = b.task(item!, "vanilla");
      expect(task.answerForm).toMatchObject({ type: "pattern", pattern: replyTextPattern(h) });
      expect(regexOf(actionSpec(answerGrammarSchema(task), task.candidates!.map((answer) => ({ answer })), "schema"))).toBe(new RegExp(replyTextPattern(h)).source);
      // The policy agent asks with the world's free answer and the task's form: the grammar GRPO samples under, in every mode.
      const listed = task.candidates!.map((answer) => ({ answer }));
      for (const mode of ["schema", "options"] as const) expect(actionSpec(AnswerSchema, listed, mode, task.answerForm)).toEqual(actionSpec(answerGrammarSchema(task), listed, mode));
      const truth = tokenizer.encode(simulationAnswer(task));
      expect(actionConstraint(tokenizer, answerGrammarSchema(task), undefined, "schema")!.acceptsTokens(truth)).toBe(true);
      // One line of text: no reply in the layout SFT teaches could be sampled under it.
      expect(actionConstraint(tokenizer, AnswerSchema, undefined, "schema")!.acceptsTokens(truth)).toBe(false);
      // Each state is bounded where the schema bounds it (max_tokens x 8 characters): a state that runs on must close.
      for (const d of h.states) {
        const grammar = actionConstraint(tokenizer, answerGrammarSchema(task), undefined, "schema")!;
        const withState = (n: number) => renderReply({ states: { ...Object.fromEntries(h.states.map((e) => [e.name, "fine"])), [d.name]: "ab ".repeat(n).slice(0, n - 1) + "c" }, response: "ok" }, h);
        expect(grammar.acceptsTokens(tokenizer.encode(withState(maxChars(d)))), d.name).toBe(true);
        expect(grammar.acceptsTokens(tokenizer.encode(withState(maxChars(d) + 1))), d.name).toBe(false);
      }
      // So is the response, closed by its tag (it may hold line breaks: a line break cannot close it).
      const grammar = actionConstraint(tokenizer, answerGrammarSchema(task), undefined, "schema")!;
      const withResponse = (n: number) => renderReply({ states: Object.fromEntries(h.states.map((e) => [e.name, "fine"])), response: "a\nb ".repeat(n).slice(0, n - 1) + "c" }, h);
      expect(grammar.acceptsTokens(tokenizer.encode(withResponse(maxChars(h.response))))).toBe(true);
      expect(grammar.acceptsTokens(tokenizer.encode(withResponse(maxChars(h.response) + 1)))).toBe(false);
    }
    // A task without a pattern keeps the free answer (ToMi's bare container names).
    expect(answerGrammarSchema({ benchmark: "tomi", itemId: "1", mode: "vanilla", story: "", question: "", prompt: "" })).toBe(AnswerSchema);
    // GRPO's rollouts sample under the same grammar.
    const points = await BenchPoints.open("usersim", file, "vanilla");
    const p = await points.point(0);
    expect(regexOf(actionSpec(p.schema, p.options, "schema"))).toBe(new RegExp(replyTextPattern(DEFAULT_HIERARCHY)).source);
  });

  it("bench usersim --agent policy:DIR: an untrained policy's every reply is well-formed", async () => {
    const file = data(40, 6);
    // Word tokens and a longer context than the preset's: the prompts are about a thousand words.
    const b = new UsersimBenchmark();
    const prompts = (await b.load(file)).map((item) => b.task(item, "vanilla").prompt + "\n" + String(item.answer));
    const m = await createFromScratch({ preset: "tiny", seed: 3, corpus: prompts, tokenizerKind: "word", context: 4096 });
    expect(m.model.config.max_position_embeddings).toBe(4096);
    const dir = tempDir("sw-usersim-grammar-model-");
    saveCheckpoint(dir, m.model, m.files);
    const out = mkdtempSync(join(tmpdir(), "sw-usersim-grammar-run-"));
    const json = join(out, "r.json");
    const code = await main(["bench", "usersim", "--data", file, "--split", "test", "--agent", `policy:${dir}?max_new_tokens=160&temperature=1&seed=2`, "--json", json, "--store", join(out, "store"), "--quiet"]);
    expect(code, io.err).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as { total: number; correct: number; metrics: Record<string, number> };
    expect(report.total).toBeGreaterThan(0);
    expect(report.metrics.format_rate).toBe(1);
    expect(report.correct).toBe(report.total);
  }, 60_000);
});
