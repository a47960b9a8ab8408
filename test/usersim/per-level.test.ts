/**
 * Per-level generation (HumanLM's): a usersim reply written one level at a time, each level by
 * its own prompt (level.txt or the hierarchy's system_prompt, after the levels written before
 * it), under its own grammar (that tag's block of the reply's pattern) and within its own budget
 * (the hierarchy's max_tokens). The policy agent (`generation=per-level`) and GRPO's rollouts
 * (`--generation per-level`) write it so; the levels joined are a reply the schema validates, and
 * the trainer's log-probs are those of each level's tokens under the masks they were sampled under.
 * Joint generation is what it was.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { tempDir } from "../policy/fixtures.js";
import { LanguageModelAgent } from "../../agents/policy/lm-agent.js";
import { answerFormSpec, compiledConstraint } from "../../agents/policy/action-grammar.js";
import { LmAgentOptionsSchema } from "../../agents/policy/options.js";
import { createFromScratch, type ScratchModel } from "../../models/from-scratch.js";
import { NativeCompleter } from "../../models/generate.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import { allowedTokens, MaskPool } from "../../trainers/grpo/grammar-masks.js";
import { rollout } from "../../trainers/grpo/rollout.js";
import { replyValues, sequenceBatch, type Sequence } from "../../trainers/grpo/sequences.js";
import { AnswerSchema, levelPromptText, type AnswerLevels, type QuestionTask } from "../../worlds/question/world.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { simulationAnswer, UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { DEFAULT_HIERARCHY, readHierarchyFile, type Hierarchy } from "../../worlds/usersim/hierarchy.js";
import { levelPrompt } from "../../worlds/usersim/prompts.js";
import { levelTextPattern, parseReply, replyTextPattern } from "../../worlds/usersim/reply.js";
import { stateOfRecord } from "../../worlds/usersim/scenario.js";
import { renderUserView } from "../../worlds/usersim/world.js";

const io = captureOutput();

/** Small budgets, so that they bind: three states of 10 tokens, the response 24. */
const SMALL_JSON = {
  stance: { desc: "your position on each target", max_tokens: 10 },
  emotion: { desc: "what you feel, how strongly, about what", max_tokens: 10 },
  goal: { desc: "what the reply is for", max_tokens: 10 },
  response: { desc: "the reply itself", max_tokens: 24 },
};
const SMALL_FILE = join(mkdtempSync(join(tmpdir(), "sw-usersim-levels-h-")), "small.json");
writeFileSync(SMALL_FILE, JSON.stringify(SMALL_JSON));
const SMALL = readHierarchyFile(SMALL_FILE);

function data(n: number, seed: number): string {
  const file = join(mkdtempSync(join(tmpdir(), "sw-usersim-levels-")), "g.jsonl");
  writeFileSync(file, generateUsersim(n, seed).jsonl);
  return file;
}

async function tasks(file: string, h: Hierarchy): Promise<QuestionTask[]> {
  const b = new UsersimBenchmark({ hierarchy: h });
  return (await b.load(file)).map((item) => b.task(item, "vanilla"));
}

function levelsOf(task: QuestionTask): AnswerLevels {
  const form = task.answerForm;
  if (form?.type !== "pattern" || !form.levels) throw new Error("the task has no levels");
  return form.levels;
}

/** The blocks of a reply in the text form, each tag's `<tag>\n...\n</tag>`. */
function blocks(text: string, h: Hierarchy): string[] {
  return [...h.states, h.response].map((d) => text.slice(text.indexOf(`<${d.name}>`), text.indexOf(`</${d.name}>`) + d.name.length + 3));
}

describe("usersim's levels", () => {
  it("ask each level as levelPrompt does, after the levels before it, and the levels' patterns joined are the reply's", async () => {
    const file = data(12, 4);
    // (The generator's states are longer than SMALL's bounds: its ground truth would not parse there.)
    for (const h of [DEFAULT_HIERARCHY, readHierarchyFile(join(import.meta.dirname, "../../worlds/usersim/hierarchies/compact.json"))]) {
      const b = new UsersimBenchmark({ hierarchy: h });
      const items = await b.load(file);
      for (const item of items.slice(0, 3)) {
        const task = b.task(item, "vanilla");
        const form = task.answerForm!;
        expect(form.type).toBe("pattern");
        if (form.type !== "pattern") continue;
        expect(form.pattern).toBe(replyTextPattern(h));
        const levels = form.levels!;
        expect(levels.items.map((l) => [l.name, l.maxTokens])).toEqual([...h.states, h.response].map((d) => [d.name, d.maxTokens]));
        const state = stateOfRecord(item.record, h);
        const speaker = { user: state.user, persona: state.profile, ...(state.platform ? { platform: state.platform } : {}) };
        const truth = simulationAnswer(task);
        const parts = blocks(truth, h);
        // The levels joined are the whole reply, and each level's text matches its own pattern alone.
        expect(parts.join(levels.separator)).toBe(truth);
        parts.forEach((p, k) => {
          expect(new RegExp(levels.items[k]!.pattern).test(p), p).toBe(true);
          expect(new RegExp(levels.items[k]!.pattern).test(`${p}\n`)).toBe(false);
          if (k + 1 < parts.length) expect(new RegExp(levels.items[k]!.pattern).test(parts[k + 1]!)).toBe(false);
        });
        const parsed = parseReply(truth, h);
        if (!parsed.ok) throw new Error(parsed.error);
        const previous: Record<string, string> = {};
        [...h.states, h.response].forEach((d, k) => {
          expect(levelPromptText(levels, k, parts.slice(0, k))).toBe(`${levelPrompt(h, d.name, speaker, previous)}\n\n${renderUserView(state)}`);
          previous[d.name] = d === h.response ? parsed.action.response : parsed.action.states[d.name]!;
        });
        expect(levelPromptText(levels, 2, parts.slice(0, 2))).toContain(`What you have already written down about yourself:\n${parts[0]}\n${parts[1]}\n`);
        expect(levelPromptText(levels, 0, [])).not.toContain("already written");
        expect(() => levelPromptText(levels, 2, parts.slice(0, 1))).toThrow("level 2 comes after 2 levels, not 1");
      }
    }
    expect(levelTextPattern(SMALL, "goal")).toMatch(/^\^<goal>\\n\(\?=\[\^\\n\]\{1,80\}\\n\)/);
    expect(() => levelTextPattern(SMALL, "value")).toThrow('"value" is not a tag of the hierarchy');
  });

  it("refuses per-level generation with soft thinking", () => {
    expect(() => GrpoConfigSchema.parse({ generation: "per-level", soft: true })).toThrow("per-level generation goes without soft thinking");
    expect(LmAgentOptionsSchema.parse({}).generation).toBe("joint");
  });
});

describe("per-level generation by a policy", () => {
  let m: ScratchModel;
  let file: string;
  beforeAll(async () => {
    file = data(24, 6);
    const corpus = (await tasks(file, SMALL)).flatMap((t) => [t.prompt, simulationAnswer(t), ...levelsOf(t).items.map((l) => l.before + l.after)]);
    m = await createFromScratch({ preset: "tiny", seed: 3, corpus, tokenizerKind: "word", context: 4096 });
  }, 60_000);

  it("the agent writes each level within its budget, under its grammar, and the levels joined are a well-formed reply", async () => {
    const completer = new NativeCompleter("t", m.model, m.tokenizer);
    const backend = async () => ({ completer, tokenizer: m.tokenizer });
    const all = await tasks(file, SMALL);
    const levels = levelsOf(all[0]!);
    const budgets = levels.items.map((l) => Math.max(l.maxTokens, compiledConstraint(m.tokenizer, answerFormSpec({ type: "pattern", pattern: l.pattern })).minBudget));
    // The budgets bind: each at its max_tokens, or what the grammar needs to close a block when that is more.
    expect(budgets.some((b, k) => b === levels.items[k]!.maxTokens)).toBe(true);
    let atBudget = 0;
    for (const [i, task] of all.slice(0, 6).entries()) {
      const turn = { world: "question", agent: "respondent", timestep: 1, observation: { text: task.prompt, data: task }, actionSchema: AnswerSchema };
      const agent = new LanguageModelAgent("p", backend, LmAgentOptionsSchema.parse({ generation: "per-level", temperature: 1, seed: i, max_new_tokens: 8 }));
      const r = await agent.act(turn);
      const info = r.info as { generation: string; completionTokens: number; levels: { name: string; raw: string; prompt: string; completionTokens: number; budget: number; finishReason: string }[] };
      expect(info.generation).toBe("per-level");
      expect(info.levels.map((l) => l.name)).toEqual(["stance", "emotion", "goal", "response"]);
      info.levels.forEach((l, k) => {
        expect(l.budget).toBe(budgets[k]);
        expect(l.completionTokens).toBeLessThanOrEqual(l.budget);
        expect(new RegExp(levels.items[k]!.pattern).test(l.raw), l.raw).toBe(true);
        if (l.completionTokens >= l.budget - 1) atBudget++;
      });
      expect(info.completionTokens).toBe(info.levels.reduce((a, l) => a + l.completionTokens, 0));
      // The reply is the levels joined; it validates under the reply's schema and pattern.
      expect(r.raw).toBe(info.levels.map((l) => l.raw).join("\n"));
      expect((r.action as { answer: string }).answer).toBe(r.raw!.trim());
      expect(parseReply(r.raw!, SMALL).ok, r.raw).toBe(true);
      expect(new RegExp(replyTextPattern(SMALL)).test(r.raw!)).toBe(true);
      expect(r.prompt).toBe(info.levels[0]!.prompt);
      expect(info.levels[3]!.prompt).toContain(`What you have already written down about yourself:\n${info.levels.slice(0, 3).map((l) => l.raw).join("\n")}\n`);
    }
    // An untrained policy runs on: some levels are closed by their budget.
    expect(atBudget).toBeGreaterThan(0);
  }, 60_000);

  it("joint generation is unchanged: the task's prompt, the whole pattern, max_new_tokens", async () => {
    const completer = new NativeCompleter("t", m.model, m.tokenizer);
    const backend = async () => ({ completer, tokenizer: m.tokenizer });
    const [task] = await tasks(file, SMALL);
    const turn = { world: "question", agent: "respondent", timestep: 1, observation: { text: task!.prompt, data: task }, actionSchema: AnswerSchema };
    const grammar = compiledConstraint(m.tokenizer, answerFormSpec({ type: "pattern", pattern: replyTextPattern(SMALL) }));
    const prompt = m.tokenizer.applyChatTemplate([{ role: "user", content: task!.prompt }], { addGenerationPrompt: true });
    const [direct] = await completer.complete([prompt], { maxNewTokens: 60, temperature: 0 }, [0], [grammar]);
    for (const options of [{}, { generation: "joint" }]) {
      const r = await new LanguageModelAgent("p", backend, LmAgentOptionsSchema.parse({ ...options, max_new_tokens: 60 })).act(turn);
      expect(r.prompt).toBe(prompt);
      expect(r.raw).toBe(direct!.text);
      expect(r.info).not.toHaveProperty("levels");
    }
  }, 60_000);

  it("GRPO's per-level rollouts: each level's tokens under its own masks give the log-probs the sampler reported", async () => {
    const points = await BenchPoints.open("usersim", file, "vanilla", { options: { hierarchy: SMALL_FILE } });
    const ps = [await points.point(0), await points.point(1)];
    const config = GrpoConfigSchema.parse({ generation: "per-level", groupSize: 3, prompts: 2, temperature: 1, maxNewTokens: 64 });
    const completer = new NativeCompleter("grpo", m.model, m.tokenizer);
    const r = await rollout(ps, { completer, model: m.model, tokenizer: m.tokenizer, config, maxPositions: 4096, seedOf: (i, j) => 100 * i + j });
    expect(r.tooLong).toEqual([]);
    expect(r.groups).toHaveLength(2);
    const stops = new Set(m.tokenizer.stopTokenIds);
    const pool = new MaskPool();
    const seqs: Sequence[] = [];
    const owner: number[] = [];
    const replies = r.groups.flatMap((g) => g.replies);
    replies.forEach((reply, i) => {
      expect(reply.scored.format, reply.scored.text).toBe(true);
      expect(parseReply(reply.scored.text, SMALL).ok).toBe(true);
      expect(reply.segments).toHaveLength(4);
      expect(reply.ids).toEqual(reply.segments!.flatMap((s) => s.ids));
      for (const s of reply.segments!) {
        expect(s.ids.length).toBeLessThanOrEqual(s.budget);
        seqs.push({ prompt: s.promptIds, reply: s.ids, allowed: allowedTokens(s.constraint!, s.ids, s.budget, stops, pool) });
        owner.push(i);
      }
    });
    // Replies of a group differ (their own seeds), and the first level's prompt is the group's.
    expect(new Set(r.groups[0]!.replies.map((x) => x.scored.text)).size).toBeGreaterThan(1);
    expect(r.groups[0]!.promptIds).toEqual(r.groups[0]!.replies[0]!.segments![0]!.promptIds);
    const { batch, masks } = sequenceBatch(seqs);
    const pass = await m.model.policyPass(batch, false, { temperature: 1, masks: masks! });
    const logp = replyValues(pass.logprobs, seqs, batch.seqLen);
    const sums = replies.map(() => 0);
    logp.forEach((v, k) => (sums[owner[k]!] = sums[owner[k]!]! + v.reduce((a, b) => a + b, 0)));
    replies.forEach((reply, i) => expect(sums[i]!).toBeCloseTo(reply.scored.logprob, 3));
  }, 60_000);

  /** A GRPO run's folders (the fixture's model saved as its start) and its command line, less the group size. */
  function grpoRun() {
    const model = tempDir("sw-usersim-levels-model-");
    saveCheckpoint(model, m.model, m.files);
    const out = tempDir("sw-usersim-levels-out-");
    const store = tempDir("sw-usersim-levels-store-");
    const args = ["train", "grpo", "--model", model, "--bench", "usersim", "--data", file, "--hierarchy", SMALL_FILE, "--out", out, "--store", store, "--prompts", "1", "--max-new-tokens", "64", "--kl", "0.01", "--quiet"];
    return { model, out, store, args };
  }

  it("train grpo --generation per-level trains on every level's tokens and logs the replies", async () => {
    const run = grpoRun();
    const { out, store } = run;
    const args = [...run.args, "--steps", "1", "--group-size", "2"];
    expect(await main([...args, "--generation", "per-level"]), io.err).toBe(0);
    const metrics = JSON.parse(readFileSync(join(out, "metrics.jsonl"), "utf8").trim()) as { formatRate: number; responseLength: number; kl: number };
    expect(metrics.formatRate).toBe(1);
    expect(metrics.kl).toBeGreaterThanOrEqual(0);
    const s = await RunStore.open(store);
    const recs = readEpisodeLog<{ turns: { prompt: string; raw: string }[] }>(s.episodesPath(s.list()[0]!)).records;
    expect(recs).toHaveLength(2);
    for (const r of recs) {
      expect(parseReply(r.turns[0]!.raw, SMALL).ok).toBe(true);
      // The logged prompt is the first level's: it asks for the stance alone.
      expect(r.turns[0]!.prompt).toContain("<stance>");
      expect(r.turns[0]!.prompt).not.toContain("<emotion>");
    }
    // A resumed run keeps its generation.
    expect(await main([...args, "--resume", "auto"]), io.err).toBe(2);
    expect(io.err).toContain("was trained with --generation per-level: resume with the same --generation");
  }, 60_000);

  it("train grpo --credit level trains each level on its own score, and a resumed run keeps its credit", async () => {
    const run = grpoRun();
    const { model, out } = run;
    const args = [...run.args, "--group-size", "3", "--generation", "per-level"];
    expect(await main([...args, "--steps", "1", "--credit", "level"]), io.err).toBe(0);
    const metrics = JSON.parse(readFileSync(join(out, "metrics.jsonl"), "utf8").trim()) as { formatRate: number; gradNorm: number };
    expect(metrics.formatRate).toBe(1);
    expect(metrics.gradNorm).toBeGreaterThan(0);
    expect(await main([...args, "--steps", "1", "--resume", "auto"]), io.err).toBe(2);
    expect(io.err).toContain("was trained with --credit level: resume with the same --credit");
    // Joint generation takes level credit too (its tokens split by their levels' tags).
    const jointRun = async (credit: "reply" | "level") => {
      const joint = tempDir(`sw-usersim-credit-joint-${credit}-`);
      expect(await main(["train", "grpo", "--model", model, "--bench", "usersim", "--data", file, "--hierarchy", SMALL_FILE, "--out", joint, "--store", run.store,
        "--prompts", "1", "--group-size", "3", "--max-new-tokens", "160", "--steps", "1", "--credit", credit, "--quiet"]), io.err).toBe(0);
      return joint;
    };
    const joint = await jointRun("level");
    const jm = JSON.parse(readFileSync(join(joint, "metrics.jsonl"), "utf8").trim()) as { gradNorm: number };
    expect(jm.gradNorm).toBeGreaterThan(0);
    // The same rollouts (the same seed) under reply credit: the per-token advantages reached the update.
    const reply = await jointRun("reply");
    expect(readFileSync(join(joint, "model.safetensors")).equals(readFileSync(join(reply, "model.safetensors")))).toBe(false);
  }, 60_000);

  it("GRPO's joint rollouts under level credit: a well-formed reply's tokens split by its levels' blocks, the group's level rewards the judge's", async () => {
    const points = await BenchPoints.open("usersim", file, "vanilla", { options: { hierarchy: SMALL_FILE } });
    const ps = [await points.point(0), await points.point(1)];
    const completer = new NativeCompleter("grpo", m.model, m.tokenizer);
    const run = (credit: "reply" | "level") =>
      rollout(ps, { completer, model: m.model, tokenizer: m.tokenizer, config: GrpoConfigSchema.parse({ credit, groupSize: 3, prompts: 2, temperature: 1, maxNewTokens: 160 }), maxPositions: 4096, seedOf: (i, j) => 100 * i + j });
    const r = await run("level");
    const stops = new Set(m.tokenizer.stopTokenIds);
    let split = 0;
    for (const g of r.groups) {
      expect(g.levelRewards).toEqual(g.replies.map((x) => x.scored.levelRewards));
      for (const reply of g.replies) {
        if (!reply.scored.format) {
          expect(reply.tokenLevels).toBeUndefined();
          continue;
        }
        split++;
        const levels = Array.from(reply.tokenLevels!);
        expect(levels).toHaveLength(reply.ids.length);
        // Each level's tokens are its block (a token may carry the separator beside a tag), in order; the others whitespace or the end of turn.
        blocks(reply.scored.text, SMALL).forEach((block, k) => {
          const mine = reply.ids.filter((_, t) => levels[t] === k);
          expect(m.tokenizer.decode(mine).trim()).toBe(block);
        });
        expect(levels.filter((k, t) => k >= 0 && t > 0 && k < levels[t - 1]!)).toEqual([]);
        reply.ids.forEach((id, t) => {
          if (levels[t] === -1 && !stops.has(id)) expect(m.tokenizer.decode([id]).trim()).toBe("");
        });
      }
    }
    expect(split).toBeGreaterThan(0);
    // Reply credit splits nothing: its rollouts are as they were.
    const plain = await run("reply");
    for (const g of plain.groups) {
      expect(g.levelRewards).toBeUndefined();
      for (const reply of g.replies) expect(reply.tokenLevels).toBeUndefined();
    }
    expect(plain.groups.map((g) => g.replies.map((x) => x.scored.text))).toEqual(r.groups.map((g) => g.replies.map((x) => x.scored.text)));
  }, 60_000);
});
