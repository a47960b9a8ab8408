import { readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { readEpisodeLog, resolveContexts } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { serializeSocializedContext, stripMentalStates, type SocializedContext } from "../../worlds/core/socialized-context.js";
import { readSapFile } from "../../worlds/core/sap-file.js";
import { fileStem } from "../../trainers/data/sap-export.js";
import { benchRun, capture, type Captured } from "./helpers.js";

let io: Captured;
beforeEach(() => {
  io = capture();
});
afterEach(() => vi.restoreAllMocks());

async function loggedContexts(store: string, runId: string) {
  const s = await RunStore.open(store);
  const read = readEpisodeLog<{ result: { id: string }; context_id: string; socialized_context?: SocializedContext }>(s.episodesPath(s.get(runId)!));
  return resolveContexts(read.records);
}

describe("export --format sap", () => {
  it("writes one file per question, byte for byte as the social-world-model project writes a context", async () => {
    const run = await benchRun("tomi", 18, 21);
    const dir = join(run.dir, "gt");
    expect(await main(["export", "--run", run.runId, "--format", "sap", "--out", dir, "--store", run.store])).toBe(0);
    expect(io.out).toContain(`18 socialized contexts (context layout, world) written to ${dir}`);
    const records = await loggedContexts(run.store, run.runId);
    expect(readdirSync(dir).sort()).toEqual(records.map((r) => `${fileStem(r.result.id)}.json`).sort());
    for (const r of records) {
      const bytes = readFileSync(join(dir, `${fileStem(r.result.id)}.json`), "utf8");
      expect(bytes).toBe(serializeSocializedContext(r.socialized_context!));
    }
    expect(fileStem("fb_all_val.txt#12")).toBe("fb_all_val.txt_12");
    expect(fileStem("fantom_v1.json#20-1-3/belief:0:mc")).toBe("fantom_v1.json_20-1-3_belief_0_mc");

    // An export never mixes with an older one in the same folder, unless asked to.
    expect(await main(["export", "--run", run.runId, "--format", "sap", "--out", dir, "--store", run.store])).toBe(2);
    expect(io.err).toContain(`bad input: ${dir}: already holds 18 .json files; write into an empty folder, or pass --force`);
    expect(await main(["export", "--run", run.runId, "--format", "sap", "--out", dir, "--store", run.store, "--force"])).toBe(0);
  });

  it("writes the social-world-model project's result files: story, question, answers, dict observations, a manual", async () => {
    const run = await benchRun("hitom", 10, 8);
    const dir = join(run.dir, "swm");
    expect(await main(["export", "--run", run.runId, "--format", "sap", "--layout", "swm", "--out", dir, "--store", run.store])).toBe(0);
    const bench = await loadBenchmark("hitom");
    const items = await bench.load(run.data);
    const records = await loggedContexts(run.store, run.runId);
    for (const [i, r] of records.entries()) {
      const file = join(dir, `${fileStem(r.result.id)}.json`);
      const json = JSON.parse(readFileSync(file, "utf8"));
      const item = items[i]!;
      expect(json).toMatchObject({ index: item.index, story: bench.task(item, "vanilla").story, question: item.question, correct_answer: item.answer, is_correct: true });
      const ctx = r.socialized_context!;
      expect(json.socialized_context.agents_names).toEqual(ctx.agents_names);
      expect(typeof json.socialized_context.context_manual).toBe("string");
      // {"Name": "text"}, as the project's dictlize splits "Name: text".
      const step = json.socialized_context.socialized_context[1];
      expect(step.observations).toEqual(Object.fromEntries(ctx.socialized_context[1]!.observations.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()])));
      // And it reads back into the same context.
      const back = readSapFile(file);
      expect(back.layout).toBe("dict");
      expect(back.path).toBe("socialized_context");
      expect(back.context).toEqual(ctx);
      expect(back.meta.question).toBe(item.question);
    }
  });

  it("exports the contexts the agent wrote in simulation mode, and says when there are none", async () => {
    const sim = await benchRun("tomi", 12, 13, "simulation");
    const dir = join(sim.dir, "agent");
    expect(await main(["export", "--run", sim.runId, "--format", "sap", "--source", "agent", "--out", dir, "--store", sim.store])).toBe(0);
    expect(readdirSync(dir)).toHaveLength(12);
    // The symbolic agent writes the world model's context from the text alone: the same
    // timesteps and observations, without the beliefs (mental states) the world model adds.
    const records = await loggedContexts(sim.store, sim.runId);
    const plain = (c: SocializedContext) => ({ ...c, socialized_context: c.socialized_context.map((s) => ({ ...s, observations: s.observations.map(stripMentalStates) })) });
    for (const r of records) {
      const written = readFileSync(join(dir, `${fileStem(r.result.id)}.json`), "utf8");
      expect(written).toBe(serializeSocializedContext(JSON.parse(written)));
      expect(plain(JSON.parse(written))).toEqual(plain(r.socialized_context!));
    }

    const vanilla = await benchRun("tomi", 6, 13);
    expect(await main(["export", "--run", vanilla.runId, "--format", "sap", "--source", "agent", "--out", join(vanilla.dir, "a"), "--store", vanilla.store])).toBe(2);
    expect(io.err).toContain("skipped 6 records without a context written by the agent (simulation mode only)");
    expect(io.err).toContain("nothing to export");

    mkdirSync(join(vanilla.dir, "f"));
    writeFileSync(join(vanilla.dir, "f", "x"), "");
    expect(await main(["export", "--run", vanilla.runId, "--format", "sap", "--out", join(vanilla.dir, "f", "x"), "--store", vanilla.store])).toBe(2);
    expect(io.err).toContain("is a file; the sap export writes a folder of JSON files");
  });
});
