import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetMetadata, parquetReadObjects, parquetSchema } from "hyparquet";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { RunStore } from "../../store/run-store.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { generateSocial } from "../../worlds/social/generator.js";
import { TOM_DATA, tomData } from "../data-paths.js";
import { questionText } from "../../agents/policy/question-prompt.js";
import { benchRun, capture, type Captured } from "./helpers.js";

let io: Captured;
beforeEach(() => {
  io = capture();
});
afterEach(() => vi.restoreAllMocks());

type Row = {
  data_source: string;
  prompt: { role: string; content: string }[];
  ability: string;
  reward_model: { style: string; ground_truth: string };
  extra_info: Record<string, unknown>;
};

async function readRows(file: string): Promise<Row[]> {
  const buf = readFileSync(file);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  return (await parquetReadObjects({ file: ab })) as Row[];
}

function metadataOf(file: string) {
  const buf = readFileSync(file);
  return parquetMetadata(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
}

describe("export --format verl", () => {
  it("writes VERL's RL layout that reads back with hyparquet, nested columns intact, each prompt the benchmark's own", async () => {
    const run = await benchRun("tomi", 30, 11);
    const out = join(run.dir, "tomi.parquet");
    expect(await main(["export", "--run", run.runId, "--format", "verl", "--out", out, "--store", run.store])).toBe(0);
    expect(io.out).toContain(`30 examples (verl, official labels) written to ${out}`);

    // The schema: a LIST of structs for the prompt, structs for reward_model and extra_info.
    const md = metadataOf(out);
    const tree = parquetSchema(md);
    expect(tree.children.map((c) => c.element.name)).toEqual(["data_source", "prompt", "ability", "reward_model", "extra_info"]);
    const prompt = tree.children[1]!;
    expect(prompt.element.converted_type).toBe("LIST");
    expect(prompt.children[0]!.element.repetition_type).toBe("REPEATED");
    expect(prompt.children[0]!.children[0]!.children.map((c) => c.element.name)).toEqual(["content", "role"]);
    expect(tree.children[3]!.children.map((c) => c.element.name)).toEqual(["ground_truth", "style"]);
    expect(md.key_value_metadata).toContainEqual({ key: "socialworld.run", value: run.runId });

    const rows = await readRows(out);
    const bench = await loadBenchmark("tomi");
    const items = await bench.load(run.data);
    expect(rows).toHaveLength(items.length);
    rows.forEach((row, i) => {
      const item = items[i]!;
      const task = bench.task(item, "vanilla");
      expect(row.data_source).toBe("socialworld/tomi");
      expect(row.ability).toBe("theory_of_mind");
      expect(row.prompt).toEqual([{ role: "user", content: task.prompt }]);
      expect(row.reward_model).toEqual({ style: "rule", ground_truth: item.answer });
      expect(row.extra_info).toMatchObject({
        split: "train",
        index: BigInt(i),
        id: item.id,
        benchmark: "tomi",
        question_type: item.type,
        mode: "vanilla",
        question: item.question,
        label_source: "official",
        official_answer: item.answer,
        world_model_answer: item.answer,
        agrees: true,
        cause: null,
        choices: task.candidates,
        reference_answer: item.answer,
        item_index: BigInt(item.index),
        file: run.data,
        line: BigInt(item.source.line!),
        field: null,
        run: run.runId,
        log_line: BigInt(i + 1),
      });
      expect(bench.judge(item, row.extra_info.reference_answer as string).correct).toBe(true);
    });
  });

  it("asks simulation mode's prompt with --mode simulation: the question over the story's socialized context", async () => {
    const run = await benchRun("tomi", 12, 4);
    const out = join(run.dir, "sim.parquet");
    expect(await main(["export", "--run", run.runId, "--format", "verl", "--mode", "simulation", "--out", out, "--store", run.store])).toBe(0);
    const rows = await readRows(out);
    const bench = await loadBenchmark("tomi");
    const items = await bench.load(run.data);
    expect(rows).toHaveLength(12);
    for (const [i, row] of rows.entries()) {
      const task = bench.task(items[i]!, "simulation");
      // The very text the policies and the GRPO trainer ask in simulation mode.
      expect(row.prompt).toEqual([{ role: "user", content: await questionText(task) }]);
      expect(row.prompt[0]!.content).toMatch(/^Question: /);
      expect(row.prompt[0]!.content).toContain(`Where each object was first and is now, and where each one and each two together saw it last:\n- story `);
      expect(row.prompt[0]!.content).not.toBe(task.prompt);
      expect(row.extra_info.mode).toBe("simulation");
    }
  });

  it("writes Hi-ToM and FANToM rows whose reference answers their official judges accept; list labels as JSON", async () => {
    for (const name of ["hitom", "fantom"] as const) {
      const run = await benchRun(name, name === "hitom" ? 20 : 40, 3);
      const out = join(run.dir, `${name}.parquet`);
      expect(await main(["export", "--run", run.runId, "--format", "verl", "--out", out, "--store", run.store, "--split", "test"])).toBe(0);
      expect(io.err).not.toContain("skipped");
      const rows = await readRows(out);
      const bench = await loadBenchmark(name);
      const items = new Map((await bench.load(run.data)).map((it) => [it.id, it]));
      expect(rows.length).toBe(items.size);
      for (const row of rows) {
        const item = items.get(row.extra_info.id as string)!;
        expect(row.extra_info.split).toBe("test");
        expect(row.prompt[0]!.content).toBe(bench.task(item, "vanilla").prompt);
        const gt = row.reward_model.ground_truth;
        expect(Array.isArray(item.answer) ? JSON.parse(gt) : gt).toEqual(item.answer);
        expect(bench.judge(item, row.extra_info.reference_answer as string).correct).toBe(true);
      }
      if (name === "hitom") expect(rows[0]!.extra_info.reference_answer).toMatch(/^Answer: [A-O]\. \w+$/);
      if (name === "fantom") expect(rows.some((r) => r.reward_model.ground_truth.startsWith("["))).toBe(true);
    }
  });

  it("rebuilds prompts with the benchmark options the run was asked with (FANToM's full conversations)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-export-full-"));
    const data = join(dir, "f.json");
    writeFileSync(data, generateFantom(30, 12).json);
    const store = join(dir, "store");
    expect(await main(["bench", "fantom", "--data", data, "--context", "full", "--store", store, "--quiet"])).toBe(0);
    const runId = (await RunStore.open(store)).list()[0]!.id;
    const out = join(dir, "full.parquet");
    expect(await main(["export", "--run", runId, "--format", "verl", "--out", out, "--store", store])).toBe(0);
    const rows = await readRows(out);
    const full = await loadBenchmark("fantom", { context: "full" });
    const short = await loadBenchmark("fantom");
    const fullItems = await full.load(data);
    const shortItems = await short.load(data);
    expect(rows).toHaveLength(fullItems.length);
    rows.forEach((row, i) => expect(row.prompt[0]!.content).toBe(full.task(fullItems[i]!, "vanilla").prompt));
    expect(rows.some((row, i) => row.prompt[0]!.content !== short.task(shortItems[i]!, "vanilla").prompt)).toBe(true);
  });

  it("rebuilds the social world's short prompts with the stance, and its tasks at the run's depth", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-export-social-"));
    const data = join(dir, "s.jsonl");
    writeFileSync(data, generateSocial(3, 5).jsonl);
    const store = join(dir, "store");
    expect(await main(["bench", "social", "--data", data, "--context", "short", "--stance", "--depth", "1", "--store", store, "--quiet"])).toBe(0);
    const runId = (await RunStore.open(store)).list()[0]!.id;
    const out = join(dir, "short.parquet");
    expect(await main(["export", "--run", runId, "--format", "verl", "--out", out, "--store", store])).toBe(0);
    const rows = await readRows(out);
    const asked = await loadBenchmark("social", { context: "short", flags: { stance: true }, depth: 1 });
    const items = await asked.load(data);
    expect(rows).toHaveLength(items.length);
    rows.forEach((row, i) => {
      expect(row.prompt[0]!.content).toBe(asked.task(items[i]!, "vanilla").prompt);
      expect(row.prompt[0]!.content).toMatch(/Your stance on [^:]+: (strongly )?(in favour|against|undecided)\./);
    });
  });

  it("rebuilds the social world's prompts with every fact the run was asked with (the flags its parameters record)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-export-social-"));
    const data = join(dir, "s.jsonl");
    writeFileSync(data, generateSocial(2, 7).jsonl);
    const store = join(dir, "store");
    expect(await main(["bench", "social", "--data", data, "--context", "short", "--seen", "--interest", "--store", store, "--quiet"])).toBe(0);
    const runId = (await RunStore.open(store)).list()[0]!.id;
    const out = join(dir, "facts.parquet");
    expect(await main(["export", "--run", runId, "--format", "verl", "--out", out, "--store", store])).toBe(0);
    const rows = await readRows(out);
    const asked = await loadBenchmark("social", { context: "short", flags: { seen: true, interest: true } });
    const items = await asked.load(data);
    expect(rows.map((r) => r.prompt[0]!.content)).toEqual(items.map((item) => asked.task(item, "vanilla").prompt));
    for (const row of rows) expect(row.prompt[0]!.content).toMatch(/It interests you [a-z ]+\. When you came to it, you had weighed (no other item|\d+ other items?) of this story(, counting any shown with it)?\./);
  });

  it.skipIf(!TOM_DATA)("gives the world model's labels with --labels world where it disputes the official ones", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-export-val-"));
    const store = join(dir, "store");
    const data = tomData("tomi", "original", "fb_all_val.txt");
    expect(await main(["bench", "tomi", "--data", data, "--limit", "600", "--store", store, "--quiet"])).toBe(0);
    const runId = (await RunStore.open(store)).list()[0]!.id;
    const official = join(dir, "official.parquet");
    const world = join(dir, "world.parquet");
    expect(await main(["export", "--run", runId, "--format", "verl", "--out", official, "--store", store])).toBe(0);
    expect(await main(["export", "--run", runId, "--format", "verl", "--out", world, "--store", store, "--labels", "world"])).toBe(0);
    const a = await readRows(official);
    const b = await readRows(world);
    expect(b).toHaveLength(a.length);
    const disputed = b.filter((r) => !r.extra_info.agrees);
    expect(disputed.length).toBeGreaterThan(0);
    b.forEach((row, i) => {
      expect(row.reward_model.ground_truth).toBe(row.extra_info.world_model_answer);
      expect(a[i]!.reward_model.ground_truth).toBe(a[i]!.extra_info.official_answer);
      expect(row.extra_info.label_source).toBe("world");
      if (!row.extra_info.agrees) {
        expect(row.reward_model.ground_truth).not.toBe(a[i]!.reward_model.ground_truth);
        expect(row.extra_info.cause).toMatch(/^(third_agent_entry|reentry_after_other_left|label_is_final_location|other)$/);
      }
    });
  });
});
