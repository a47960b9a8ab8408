import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { pythonJson, serializeSocializedContext, SocializedContextSchema, validateSocializedContext } from "../../worlds/core/socialized-context.js";
import { fileStem } from "../../trainers/data/sap-export.js";
import { benchRun, capture, type Captured } from "./helpers.js";

let io: Captured;
beforeEach(() => {
  io = capture();
});
afterEach(() => vi.restoreAllMocks());

const tmp = () => mkdtempSync(join(tmpdir(), "sw-import-"));

/** A result file in the social-world-model project's layout: its SocializedContext dump (dicts, a manual) beside the row. */
const SWM_RESULT = {
  story: "['Mila entered the den.', 'Noah entered the den.', 'The apple is in the red_box.', 'Mila exited the den.', 'Noah moved the apple to the blue_bag.']",
  question: "Where will Mila look for the apple?",
  reasoning: "Mila left before the apple was moved.",
  answer: "red_box",
  correct_answer: "red_box",
  is_correct: true,
  socialized_context: {
    agents_names: ["Mila", "Noah"],
    socialized_context: [
      { timestep: "0", state: "Mila enters the den.", observations: { Mila: "<same_as_state />", Noah: "none" }, actions: { Mila: "enters the den", Noah: "none" } },
      { timestep: "1", state: "Noah enters the den.", observations: { Mila: "<same_as_state />", Noah: "<same_as_state />" }, actions: { Mila: "none", Noah: "enters the den" } },
      {
        timestep: "2",
        state: "The apple is in the red_box.",
        observations: { Noah: "<same_as_state />", Mila: "<same_as_state /> <mental_state>The apple is in the red_box.</mental_state>" },
        actions: { Mila: "exits the den", Noah: "none" },
      },
      { timestep: "3", state: "Mila exits the den.", observations: { Mila: "<same_as_state />", Noah: "<same_as_state />" }, actions: { Mila: "none", Noah: "moves the apple to the blue_bag" } },
      { timestep: "4", state: "Noah moved the apple to the blue_bag.", observations: { Mila: "none", Noah: "<same_as_state />" }, actions: { Mila: "none", Noah: "none" } },
    ],
    context_manual: "Observations follow the agents' locations.",
  },
  extra_info: "",
};

async function onlyRun(store: string) {
  const s = await RunStore.open(store);
  const runs = s.list();
  expect(runs).toHaveLength(1);
  const run = runs[0]!;
  return { run, records: readEpisodeLog<Record<string, unknown>>(s.episodesPath(run)).records };
}

describe("import sap", () => {
  it("registers our own context as a run with one episode that replays byte for byte", async () => {
    const bench = await benchRun("tomi", 6, 17);
    const gt = join(bench.dir, "gt");
    expect(await main(["export", "--run", bench.runId, "--format", "sap", "--out", gt, "--store", bench.store])).toBe(0);
    const s = await RunStore.open(bench.store);
    const first = readEpisodeLog<{ result: { id: string } }>(s.episodesPath(s.get(bench.runId)!)).records[0]!;
    const file = join(gt, `${fileStem(first.result.id)}.json`);
    const store = join(tmp(), "store");
    expect(await main(["import", "sap", file, "--store", store])).toBe(0);
    const { run, records } = await onlyRun(store);
    expect(run).toMatchObject({ kind: "import", status: "done", params: { format: "sap", source: file, layout: "list", path: null } });
    expect(run.summary).toMatchObject({ episodes: 1, agents: 3, problems: 0 });
    expect(io.out).toContain(`as run ${run.id}`);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ kind: "imported_context", run: run.id, source: file, layout: "list" });
    // What the REST API serves the viewer for this episode: the file, byte for byte.
    const ctx = SocializedContextSchema.parse(records[0]!.socialized_context);
    expect(serializeSocializedContext(ctx)).toBe(readFileSync(file, "utf8"));
    // The viewer replays it (runs episodes prints it).
    expect(await main(["runs", "episodes", run.id, "--store", store])).toBe(0);
    expect(JSON.parse(io.out.trim().split("\n").at(-1)!)).toEqual(records[0]);
  });

  it("reads the social-world-model project's result files: dict observations become lines in agents_names order", async () => {
    const dir = tmp();
    const file = join(dir, "17.json");
    writeFileSync(file, pythonJson(SWM_RESULT));
    const store = join(dir, "store");
    expect(await main(["import", "sap", file, "--store", store, "--title", "SWM ToMi row 17"])).toBe(0);
    expect(io.out).toContain("imported 2 agents, 5 timesteps (dict layout, under socialized_context)");
    const { run, records } = await onlyRun(store);
    expect(run.title).toBe("SWM ToMi row 17");
    const rec = records[0]!;
    expect(rec).toMatchObject({ story: SWM_RESULT.story, question: SWM_RESULT.question, answer: "red_box", correct_answer: "red_box", context_manual: SWM_RESULT.socialized_context.context_manual });
    const ctx = SocializedContextSchema.parse(rec.socialized_context);
    expect(validateSocializedContext(ctx)).toEqual([]);
    // Noah's entry came first in the file's dict; lines follow agents_names.
    expect(ctx.socialized_context[2]!.observations).toEqual(["Mila: <same_as_state /> <mental_state>The apple is in the red_box.</mental_state>", "Noah: <same_as_state />"]);
    expect(ctx.socialized_context[4]!.actions).toEqual(["Mila: none", "Noah: none"]);
    // Exported again as a result file, it keeps what the file held beside its context.
    const out = join(dir, "swm");
    expect(await main(["export", "--run", run.id, "--format", "sap", "--layout", "swm", "--out", out, "--store", store])).toBe(0);
    const [name] = readdirSync(out);
    const back = JSON.parse(readFileSync(join(out, name!), "utf8"));
    expect(back).toMatchObject({ story: SWM_RESULT.story, question: SWM_RESULT.question, answer: "red_box", correct_answer: "red_box" });
    expect(back.socialized_context.context_manual).toBe(SWM_RESULT.socialized_context.context_manual);
  });

  it("reads a bare context with the project's older tags, and warns about an agent with no entry", async () => {
    const dir = tmp();
    const file = join(dir, "conv.json");
    writeFileSync(
      file,
      JSON.stringify({
        agents_names: ["Ana", "Ben"],
        socialized_context: [
          { timestep: 1, state: "none", observations: ["Ana: none", "Ben: none"], actions: ["Ana: Says: 'Hi Ben.'", "Ben: none"] },
          { timestep: 2, state: "[SAME AS LAST ACTION]", observations: { Ana: "[SAME AS STATE]" }, actions: { Ana: "none", Ben: "none" } },
        ],
      }),
    );
    const store = join(dir, "store");
    expect(await main(["import", "sap", file, "--store", store])).toBe(0);
    expect(io.err).toContain(`warning: ${file}: socialized_context[1].observations: no entry for Ben`);
    const { run, records } = await onlyRun(store);
    expect(run.summary).toMatchObject({ timesteps: 2, problems: 1 });
    const ctx = SocializedContextSchema.parse(records[0]!.socialized_context);
    expect(ctx.socialized_context[0]!.timestep).toBe("1");
    expect(ctx.socialized_context[1]!.observations).toEqual(["Ana: [SAME AS STATE]", "Ben: none"]);
    expect(records[0]!.problems).toEqual(["socialized_context[1].observations: no entry for Ben"]);
  });

  it("stops on bad input with the file and the field, and registers nothing", async () => {
    const dir = tmp();
    const store = join(dir, "store");
    const cases: [string, string, string][] = [
      ["a.json", "{not json", "not valid JSON"],
      ["b.json", JSON.stringify({ agents: [] }), "(socialized_context): no socialized context: expected {agents_names, socialized_context: [...]}"],
      ["c.json", JSON.stringify({ ...SWM_RESULT, socialized_context: { ...SWM_RESULT.socialized_context, agents_names: "Mila" } }), "(socialized_context.agents_names): "],
      [
        "d.json",
        JSON.stringify({ agents_names: ["A"], socialized_context: [{ timestep: "1", state: "none", observations: ["A: none"], actions: ["A: none"] }, { timestep: "2", state: "x", observations: 5, actions: [] }] }),
        '(socialized_context[1].observations): expected a list of "Name: text" lines or a {"Name": "text"} object',
      ],
      ["e.json", JSON.stringify({ agents_names: ["A"], socialized_context: [{ timestep: "1", observations: [], actions: [] }] }), "(socialized_context[0].state): "],
    ];
    for (const [name, text, message] of cases) {
      writeFileSync(join(dir, name), text);
      expect(await main(["import", "sap", join(dir, name), "--store", store])).toBe(2);
      expect(io.err).toContain(`socialworld import: bad input: ${join(dir, name)}`);
      expect(io.err).toContain(message);
    }
    expect(await main(["import", "sap", join(dir, "missing.json"), "--store", store])).toBe(2);
    expect(io.err).toContain(`${join(dir, "missing.json")}: file not found`);
    expect(await main(["import", "csv", join(dir, "a.json"), "--store", store])).toBe(2);
    expect(io.err).toContain('expected "sap"');
    expect((await RunStore.open(store)).list()).toEqual([]);
  });
});
