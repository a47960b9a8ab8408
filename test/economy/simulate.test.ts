/**
 * `socialworld simulate economy`: the run's log (one record per month, read back as the run's
 * socialized context and turns), the report (--json: the yearly table, phillips and okun), every
 * parameter as a flag, resuming an interrupted run to the economy the whole run gives, and a
 * policy agent asked for every household each month (all of them at once, for batching).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulationSession } from "../../benchmarks/simulation-session.js";
import { main } from "../../cli/main.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { startPolicyServer } from "../../server/openai/app.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { readRunLog, type RoomEpisodeRecord } from "../../trainers/data/run-log.js";
import { validateSocializedContext } from "../../worlds/core/socialized-context.js";
import {
  EconomyRunner,
  economyParams,
  householdObservation,
  publicStats,
  renderObservation,
  householdRule,
  responsivePolicy,
  simulateEconomy,
  initialEconomy,
  type EconomyParams,
} from "../../worlds/economy/index.js";
import type { Agent } from "../../worlds/core/agent.js";
import { captureOutput } from "../capture.js";
import { tempDir } from "../policy/fixtures.js";

const io = captureOutput();
const small = ["--households", "6", "--months", "48", "--skill-batches", "5"];

/** An economy run as the command starts it, stopped after `months` months. */
async function interrupted(store: string, params: EconomyParams, seed: number, agent: string, months: number): Promise<string> {
  const policy = householdRule(agent, seed)!;
  const sim = new EconomyRunner({ params, seed, agentId: agent, deciders: { kind: "rule", policy } });
  const session = await SimulationSession.start({
    store: await RunStore.open(store),
    sim,
    title: "stopped",
    params: { seed, agent, logHouseholds: sim.logged, economy: params },
    sameOnResume: ["seed", "agent", "logHouseholds", "economy"],
  });
  for (let i = 0; i < months; i++) await session.step();
  await session.close("interrupted");
  return session.run.id;
}

interface Report {
  run: string;
  agent: string;
  years: { year: number; unemployment: number; wageInflation: number | null }[];
  phillips: number | null;
  okun: number | null;
  okunRelative: number | null;
  replies?: { turns: number; strictFormatRate: number; fallbackRate: number };
}

describe("socialworld simulate economy", () => {
  it("runs the economy the fast simulation runs, logs every month, and writes the report", async () => {
    const store = tempDir("sw-sim-");
    const out = join(store, "report.json");
    expect(await main(["simulate", "economy", ...small, "--agent", "responsive:0.2", "--seed", "4", "--store", store, "--json", out, "--quiet"])).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8")) as Report;
    const fast = simulateEconomy({ params: economyParams({ households: 6, months: 48, skillBatches: 5 }), seed: 4, policy: responsivePolicy(4, 0.2) });
    expect(report.years).toEqual(JSON.parse(JSON.stringify(fast.years)));
    expect([report.phillips, report.okun, report.okunRelative]).toEqual([fast.phillips, fast.okun, fast.okunRelative]);
    expect(report.agent).toBe("responsive:0.2");
    expect(io.out).toContain("| year | real GDP | price level | inflation | unemployment | hourly wage | wage inflation | real GDP growth | interest rate |");
    expect(io.out).toMatch(/Phillips curve: corr\(unemployment, wage inflation\) = -?\d\.\d{3}\n/);
    expect(io.out).toMatch(/6 households × 48 months in \d+\.\d s/);
    expect(io.out).toMatch(/Okun.s law: corr\(change in unemployment, real GDP growth\) = -?\d\.\d{3}; with the relative change of unemployment (-?\d\.\d{3}|n\/a \(too few years with real GDP growth after one with unemployment\))\n/);

    const s = await RunStore.open(store);
    const run = s.get(report.run)!;
    expect(run).toMatchObject({ kind: "simulate", status: "done", params: { world: "economy", seed: 4, agent: "responsive:0.2", logHouseholds: 6 } });
    expect(JSON.parse(readFileSync(join(s.dirOf(run), "report.json"), "utf8"))).toEqual(report);
    const months = readEpisodeLog<{ kind: string; timestep: number; observations: string[] }>(s.episodesPath(run)).records;
    expect(months.map((m) => m.timestep)).toEqual(Array.from({ length: 48 }, (_, i) => i + 1));
    expect(new Set(months.map((m) => m.kind))).toEqual(new Set(["episode_step"]));
    // What household 1 was asked in month 3, exactly.
    let state = initialEconomy(economyParams({ households: 6, months: 48, skillBatches: 5 }), 4);
    simulateEconomy({ params: state.params, seed: 4, policy: responsivePolicy(4, 0.2), onMonth: (m) => m.stats.month === 3 && (state = m.before) });
    expect(months[2]!.observations[0]).toBe(renderObservation(householdObservation(state, 0, publicStats(state))));

    // Read back, the months are the run's one episode: a timestep per month (and the last one).
    const log = readRunLog(s, run);
    expect(log.records).toHaveLength(1);
    const ep = log.records[0]!.record as RoomEpisodeRecord;
    expect(ep.kind).toBe("room_episode");
    expect(ep.socialized_context.agents_names).toEqual(["household-1", "household-2", "household-3", "household-4", "household-5", "household-6"]);
    expect(ep.socialized_context.socialized_context).toHaveLength(49);
    expect(validateSocializedContext(ep.socialized_context)).toEqual([]);
    expect(ep.turns).toHaveLength(6 * 48);
    // A rule's turn is its decision and what it saw; the exporters write the decision as the JSON asked for.
    expect(ep.turns[0]).toMatchObject({ agent: "household-1", timestep: 1, observation: months[0]!.observations[0], source: "agent" });
    expect(ep.turns[0]!.raw).toBeUndefined();
    expect(ep.turns[6 * 2]!.action).toEqual({ work: (months[2] as unknown as { decisions: { work: number[] } }).decisions.work[0], consumption: expect.any(Number) });
  });

  it("says why a correlation is missing: too few years, or a series that never moves", async () => {
    const store = tempDir("sw-sim-");
    expect(await main(["simulate", "economy", ...small, "--agent", "fixed", "--store", store, "--quiet"])).toBe(0);
    // Households that always work: unemployment is 0 every year, so neither curve has a slope.
    expect(io.out).toContain("Phillips curve: corr(unemployment, wage inflation) = n/a (a series without variation)\n");
    // Okun's change in unemployment is 0 every year; its relative change needs a year with unemployment.
    expect(io.out).toContain(
      "Okun's law: corr(change in unemployment, real GDP growth) = n/a (a series without variation); with the relative change of unemployment n/a (too few years with real GDP growth after one with unemployment)\n",
    );
    expect(await main(["simulate", "economy", ...small, "--months", "36", "--store", store, "--quiet"])).toBe(0);
    expect(io.out).toContain("Phillips curve: corr(unemployment, wage inflation) = n/a (too few years)\n");
  });

  it("logs as many households' views as asked, and every household's decision", async () => {
    const store = tempDir("sw-sim-");
    expect(await main(["simulate", "economy", ...small, "--months", "12", "--log-households", "2", "--store", store, "--quiet"])).toBe(0);
    const s = await RunStore.open(store);
    const run = s.list()[0]!;
    const m = readEpisodeLog<{ agents_names: string[]; observations: string[]; turns: unknown[]; decisions: { work: number[] } }>(s.episodesPath(run)).records[0]!;
    expect([m.agents_names, m.observations.length, m.turns.length, m.decisions.work.length]).toEqual([["household-1", "household-2"], 2, 2, 6]);
  });

  it("takes up an interrupted run and ends with the economy of the whole run", async () => {
    const store = tempDir("sw-sim-");
    const params = economyParams({ households: 5, months: 26, skillBatches: 5 });
    const id = await interrupted(store, params, 2, "random", 11);
    const whole = join(store, "whole.json");
    const resumed = join(store, "resumed.json");
    const flags = ["--households", "5", "--months", "26", "--skill-batches", "5", "--agent", "random", "--seed", "2", "--store", store, "--quiet"];
    expect(await main(["simulate", "economy", ...flags, "--resume", id, "--json", resumed])).toBe(0);
    expect(io.err).toContain(`resuming run ${id} at month 12`);
    expect(await main(["simulate", "economy", ...flags, "--json", whole])).toBe(0);
    const a = JSON.parse(readFileSync(resumed, "utf8")) as Report;
    const b = JSON.parse(readFileSync(whole, "utf8")) as Report;
    expect(a.years).toEqual(b.years);
    expect(a.run).toBe(id);
    expect(readEpisodeLog(join(store, "runs", id, "episodes.jsonl")).records).toHaveLength(26);

    // Another seed, agent or economy is another run; a finished run has nothing left.
    await expect(main(["simulate", "economy", ...flags, "--seed", "3", "--resume", id])).resolves.toBe(2);
    expect(io.err).toMatch(/--resume: run \S+ is done: there is nothing to take up/);
  });

  it("exports a run's turns as chat examples and its months as a socialized context", async () => {
    const store = tempDir("sw-sim-");
    expect(await main(["simulate", "economy", ...small, "--months", "3", "--store", store, "--quiet"])).toBe(0);
    const s = await RunStore.open(store);
    const run = s.list()[0]!;
    const chat = join(store, "chat.jsonl");
    expect(await main(["export", "--run", run.id, "--format", "chat", "--turns", "--out", chat, "--store", store])).toBe(0);
    const rows = readFileSync(chat, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { messages: { role: string; content: string }[] });
    expect(rows).toHaveLength(6 * 3);
    const steps = readEpisodeLog<{ observations: string[]; decisions: { work: number[]; consumption: number[] } }>(s.episodesPath(run)).records;
    expect(rows[7]!.messages.at(-2)!.content).toContain(steps[1]!.observations[1]!);
    expect(JSON.parse(rows[7]!.messages.at(-1)!.content)).toEqual({ work: steps[1]!.decisions.work[1], consumption: steps[1]!.decisions.consumption[1] });
    const sap = join(store, "sap");
    expect(await main(["export", "--run", run.id, "--format", "sap", "--out", sap, "--store", store])).toBe(0);
  });

  it("reads a step log only as consecutive timesteps, naming the line that is not", async () => {
    const store = tempDir("sw-sim-");
    const id = await interrupted(store, economyParams({ households: 3, months: 12, skillBatches: 5 }), 5, "heuristic", 4);
    const s = await RunStore.open(store);
    const path = s.episodesPath(s.get(id)!);
    const lines = readFileSync(path, "utf8").trim().split("\n");
    writeFileSync(path, [lines[0], lines[1], lines[3]].join("\n") + "\n");
    expect(() => readRunLog(s, s.get(id)!)).toThrow(/episodes\.jsonl:3: episode_step record: timestep 4 follows timestep 2/);
    const code = await main(["simulate", "economy", "--households", "3", "--months", "12", "--skill-batches", "5", "--seed", "5", "--agent", "heuristic", "--store", store, "--resume", id]);
    expect(code).not.toBe(0);
    expect(io.err).toMatch(/episodes\.jsonl:3: cannot replay this step: expected month 3 of the economy, found economy's timestep 4/);
  });

  it("refuses another run's settings when resuming", async () => {
    const store = tempDir("sw-sim-");
    const id = await interrupted(store, economyParams({ households: 4, months: 20, skillBatches: 5 }), 1, "heuristic", 1);
    const code = await main(["simulate", "economy", "--households", "4", "--months", "20", "--skill-batches", "5", "--seed", "2", "--store", store, "--resume", id]);
    expect(code).toBe(2);
    expect(io.err).toContain(`--resume: run ${id} has seed=1, not 2`);
  });

  it("names the flag at fault", async () => {
    const store = tempDir("sw-sim-");
    const cases: [string[], RegExp][] = [
      [["--max-price-inflation", "lots"], /--max-price-inflation: expected a number, got "lots"/],
      [["--bracket-rates", "0.1,0.2"], /--bracket-rates: 2 rates for 7 brackets/],
      [["--bracket-cutoffs", "0,10,5", "--bracket-rates", "0.1,0.2,0.3"], /--bracket-cutoffs \(item 2\): bracket edges must increase/],
      [["--households", "0"], /--households: Too small/],
      [["--agent", "clever"], /--agent: unknown agent "clever" \(household rules: heuristic, responsive\[:K\], fixed\[:W,C\], random; models: /],
      [["--agent", "fixed:1"], /--agent: household rule "fixed:1": expected fixed:W,C/],
      [["--agent", "simulation"], /--agent: simulation answers benchmark questions, it does not run a household/],
      [["--agent", "policy:/no/such/folder"], /no\/such\/folder/],
    ];
    for (const [flags, message] of cases) {
      io.err = "";
      expect(await main(["simulate", "economy", "--months", "12", "--store", store, ...flags]), flags.join(" ")).toBe(2);
      expect(io.err, flags.join(" ")).toMatch(message);
    }
    expect(await main(["simulate", "tomi"])).toBe(2);
    expect(io.err).toContain('expected the world to simulate: "economy"');
  });

  it("asks a policy for every household each month, logs what it wrote, and falls back as EconAgent does", async () => {
    const params = economyParams({ households: 3, months: 2, skillBatches: 5 });
    const state = initialEconomy(params, 0);
    const corpus = state.names.map((_, i) => renderObservation(householdObservation(state, i, publicStats(state))));
    const m = await createFromScratch({ preset: "1m", seed: 3, corpus: [...corpus, '{"work": 0.5, "consumption": 0.25}'] });
    const dir = tempDir("sw-sim-model-");
    saveCheckpoint(dir, m.model, m.files);
    const store = tempDir("sw-sim-");
    const out = join(store, "r.json");
    const spec = `policy:${dir}?max_new_tokens=12&temperature=1&seed=2`;
    expect(await main(["simulate", "economy", "--households", "3", "--months", "2", "--skill-batches", "5", "--agent", spec, "--store", store, "--json", out, "--quiet"])).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8")) as Report;
    expect(report.replies?.turns).toBe(6);
    const s = await RunStore.open(store);
    const months = readEpisodeLog<{ turns: { agent: string; raw?: string; prompt?: string; source: string; strict: boolean; error?: string }[] }>(
      s.episodesPath(s.get(report.run)!),
    ).records;
    const turns = months.flatMap((x) => x.turns);
    expect(turns.map((t) => t.agent)).toEqual(["household-1", "household-2", "household-3", "household-1", "household-2", "household-3"]);
    for (const t of turns) {
      expect(t.prompt).toContain("Answer with JSON only");
      expect(typeof t.raw).toBe("string");
      // An untrained model writes no decision: each turn falls back to work 1, consumption 0.5.
      if (t.source === "fallback") expect(t.error).toBeTruthy();
    }
    const fallbacks = turns.filter((t) => t.source === "fallback").length;
    expect(report.replies?.fallbackRate).toBeCloseTo(fallbacks / 6, 12);
    expect(io.out).toMatch(/replies: 6, exactly the decision's JSON \d+\.\d\d%, fallbacks \d+\.\d\d%/);
  });

  it("asks an OpenAI-compatible endpoint (llm:) for every household, its reply held to the decision's JSON layout", async () => {
    const params = economyParams({ households: 3, months: 2, skillBatches: 5 });
    const state = initialEconomy(params, 0);
    const corpus = state.names.map((_, i) => renderObservation(householdObservation(state, i, publicStats(state))));
    // Room for the agent's system message (its JSON schema) beside a household's prompt.
    const m = await createFromScratch({ preset: "1m", seed: 3, corpus: [...corpus, '{"work": 0.5, "consumption": 0.25}'], context: 2048 });
    const dir = tempDir("sw-sim-llm-");
    saveCheckpoint(dir, m.model, m.files);
    const server = await startPolicyServer({ models: [{ id: "household", dir }], port: 0, host: "127.0.0.1" });
    try {
      const store = tempDir("sw-sim-");
      const out = join(store, "r.json");
      const spec = `llm:household@${server.baseUrl}?temperature=1&seed=4&max_tokens=40`;
      expect(await main(["simulate", "economy", "--households", "3", "--months", "2", "--skill-batches", "5", "--agent", spec, "--store", store, "--json", out, "--quiet"])).toBe(0);
      const report = JSON.parse(readFileSync(out, "utf8")) as Report;
      expect(report.replies?.turns).toBe(6);
      const s = await RunStore.open(store);
      const turns = readEpisodeLog<{ turns: { agent: string; raw?: string; source: string; error?: string; info?: { calls: unknown[] } }[] }>(
        s.episodesPath(s.get(report.run)!),
      ).records.flatMap((x) => x.turns);
      expect(turns.map((t) => t.agent)).toEqual(["household-1", "household-2", "household-3", "household-1", "household-2", "household-3"]);
      for (const t of turns) {
        // The endpoint samples under the schema the agent sends as response_format: an untrained
        // model writes JSON with exactly the two keys. Their bounds are not sent (the agent's
        // portable schema leaves minimum and maximum out), so a number above 1 is refused by the
        // agent's zod check, asked again once, then given EconAgent's fallback, the error logged.
        expect(Object.keys(JSON.parse(t.raw!) as object).sort()).toEqual(["consumption", "work"]);
        expect(t.info?.calls.length).toBeGreaterThan(0);
        if (t.source === "fallback") expect(t.error).toMatch(/does not match the schema/);
        else expect(t.source).toBe("agent");
      }
    } finally {
      await server.close();
    }
  });

  it("refuses an llm: reply outside [0, 1] by the agent's zod check, asks again once, then falls back; a reply in bounds is used", async () => {
    // An endpoint that answers work 1.5 to a first question, and per `repair` to the question
    // asked again (the request that carries the refused reply back as the assistant's turn).
    const requests: { repair: boolean }[] = [];
    let repair = '{"work": 1.5, "consumption": 0.5}';
    const server = createServer(async (req, res) => {
      let text = "";
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text) as { messages: { role: string }[] };
      const isRepair = body.messages.some((m) => m.role === "assistant");
      requests.push({ repair: isRepair });
      const content = isRepair ? repair : '{"work": 1.5, "consumption": 0.5}';
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "c", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const simulate = async () => {
      const store = tempDir("sw-sim-");
      const out = join(store, "r.json");
      const spec = `llm:stub@http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      expect(await main(["simulate", "economy", "--households", "3", "--months", "2", "--skill-batches", "5", "--agent", spec, "--store", store, "--json", out, "--quiet"]), io.err).toBe(0);
      const report = JSON.parse(readFileSync(out, "utf8")) as Report;
      const s = await RunStore.open(store);
      return readEpisodeLog<{ turns: { source: string; error?: string; action: { work: number; consumption: number }; info?: { calls: unknown[] } }[] }>(
        s.episodesPath(s.get(report.run)!),
      ).records.flatMap((x) => x.turns);
    };
    try {
      // Never in bounds: each of the 6 decisions is asked twice (the question, then once again),
      // and gets EconAgent's fallback (work 1, consumption 0.5) with the zod error.
      const refused = await simulate();
      expect(refused).toHaveLength(6);
      expect(requests).toHaveLength(12);
      expect(requests.filter((r) => r.repair)).toHaveLength(6);
      for (const t of refused) {
        expect(t.source).toBe("fallback");
        expect(t.info?.calls).toHaveLength(2);
        // The error names the bound the endpoint was not sent, and the field.
        expect(t.error).toMatch(/could not be read after one repair: the reply does not match the schema: .*expected number to be <=1.*at work/);
        expect(t.action).toEqual({ work: 1, consumption: 0.5 });
      }
      // In bounds when asked again: the repaired reply is the household's decision.
      requests.length = 0;
      repair = '{"work": 0.6, "consumption": 0.35}';
      const repaired = await simulate();
      expect(requests).toHaveLength(12);
      for (const t of repaired) {
        expect(t.source).toBe("agent");
        expect(t.info?.calls).toHaveLength(2);
        expect(t.action).toEqual({ work: 0.6, consumption: 0.35 });
      }
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });

  it("asks a model agent for the month's 100 households at once, so that its engine can batch them", async () => {
    // A model agent that holds each reply a tick: were households asked one after another, at
    // most one request would be in flight (the engine's BatchQueue batches what is in flight).
    let inFlight = 0;
    let most = 0;
    const asked: number[] = [];
    const agent: Agent = {
      id: "batch-probe",
      async act(turn) {
        inFlight++;
        most = Math.max(most, inFlight);
        asked.push(turn.timestep);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        return { action: { work: 1, consumption: 0.5 }, raw: '{"work": 1, "consumption": 0.5}' };
      },
    };
    const params = economyParams({ households: 100, months: 2, skillBatches: 5 });
    const sim = new EconomyRunner({ params, seed: 1, agentId: "batch-probe", deciders: { kind: "model", agent } });
    await sim.step();
    expect(most).toBe(100);
    await sim.step();
    expect(asked).toEqual([...Array(100).fill(1), ...Array(100).fill(2)]);
    expect(sim.counts).toEqual({ turns: 200, strict: 200, fallbacks: 0 });
  });
});
