/**
 * `socialworld audit --run ID` on runs as the tools write them: benchmark runs of the symbolic
 * simulation agent (clean: no leak), a room episode with a model's seat that states what its agent
 * never saw (found, in the seat's controller's row), and the same episode imported as a bare
 * socialized context (its world found from its sentences).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import type { RunAudit } from "../../server/run-audit.js";
import { EpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { serializeSocializedContext } from "../../worlds/core/socialized-context.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import type { HitomEventData, HitomState } from "../../worlds/hitom/world.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { captureOutput } from "../capture.js";
import { playScripted } from "./scripted.js";

const io = captureOutput();

async function auditJson(store: string, run: string, extra: string[] = []): Promise<RunAudit> {
  const out = join(store, `${run}.audit.json`);
  expect(await main(["audit", "--run", run, "--store", store, "--json", out, "--quiet", ...extra])).toBe(0);
  return JSON.parse(readFileSync(out, "utf8")) as RunAudit;
}

/** A scripted Hi-ToM room episode with one more turn: an agent claims where an object is although it never saw it there. */
async function leakyEpisode(seed: number) {
  const { scenario, episode, context } = await playScripted("hitom", seed);
  const s = episode.finalState as HitomState;
  const seen = new Set<string>();
  for (const rec of episode.steps) for (const e of rec.events) for (const [o, c] of (e.data as HitomEventData).facts) for (const a of e.observers) seen.add(`${a}:${o}@${c}`);
  for (const object of s.layout.objects) {
    const truth = s.objectContainer.get(object)!;
    const agent = s.agents.find((a) => !seen.has(`${a}:${object}@${truth}`));
    // An object the story's sentences place (an imported context has only those to go by).
    if (!agent || !context.socialized_context.some((st) => st.state.includes(`the ${object} to the ${truth}`) || st.state.includes(`The ${object} is in the ${truth}`))) continue;
    const last = episode.steps.length;
    const turns = episode.turns.map((t) => ({ agent: t.agent, timestep: t.timestep, action: t.action, actionText: t.actionText, source: "agent" }));
    turns.push({ agent, timestep: last, action: { type: "claim", object, container: truth }, actionText: `publicly claims that ${object} is in the ${truth}`, source: "agent" });
    const seats = Object.fromEntries(s.agents.map((a) => [a, { controller: a === agent ? "llm:leaky" : "scripted", person: null }]));
    return { context, turns, seats, agent, object, truth, seed, title: scenario.title };
  }
  return undefined;
}

describe("socialworld audit", () => {
  it("finds nothing in the symbolic agent's benchmark runs of each ToM world (each story audited once)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-audit-"));
    const tomi = await generateTomi(60, 2);
    writeFileSync(join(dir, "t.txt"), tomi.txt);
    writeFileSync(join(dir, "t.trace"), tomi.trace);
    writeFileSync(join(dir, "h.json"), (await generateHitom(60, 2)).json);
    writeFileSync(join(dir, "f.json"), generateFantom(8, 2).json);
    const store = join(dir, "store");
    for (const [bench, file] of [["tomi", "t.txt"], ["hitom", "h.json"], ["fantom", "f.json"]] as const) {
      expect(await main(["bench", bench, "--data", join(dir, file), "--agent", "simulation", "--store", store, "--quiet"])).toBe(0);
    }
    const runs = (await RunStore.open(store)).list();
    expect(runs).toHaveLength(3);
    for (const run of runs) {
      const a = await auditJson(store, run.id);
      expect(a.leaks, run.title).toBe(0);
      expect(a.actions, run.title).toBeGreaterThan(10);
      expect(a.audited).toBeGreaterThan(0);
      // The other questions about an audited story point to it.
      expect(a.episodes.filter((e) => !e.audited).every((e) => e.reason === "the same story as an earlier record (audited there)")).toBe(true);
      expect(io.out).toContain("0 leaks");
    }
  });

  it("reports a planted leak in a room episode: the agent, the fact, when it became true, why, and the seat's controller", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-audit-"));
    const store = await RunStore.open(join(dir, "store"));
    let leaky;
    for (let seed = 0; !leaky; seed++) leaky = await leakyEpisode(seed);
    const run = await store.create("room", "leaky room", { world: "hitom" });
    const log = new EpisodeLog(store.episodesPath(run));
    log.append({ kind: "room_episode", run: run.id, room: "r1", world: "hitom", title: leaky.title, seed: leaky.seed, seats: leaky.seats, socialized_context: leaky.context, turns: leaky.turns });
    log.close();
    const a = await auditJson(join(dir, "store"), run.id);
    expect(a.leaks).toBe(1);
    const leak = a.episodes[0]!.leaks[0]!;
    expect(leak).toMatchObject({ agent: leaky.agent, fact: { id: `${leaky.object}@${leaky.truth}` }, via: "action" });
    expect(leak.why).toContain(`not ${leaky.agent}`);
    expect(a.byController["llm:leaky"]).toEqual({ actions: a.byAgent[leaky.agent]!.actions, leaks: 1 });
    expect(a.byController.scripted!.leaks).toBe(0);
    expect(io.out).toContain(`**${leaky.agent}** states that the ${leaky.object} is in the ${leaky.truth}`);
    expect(io.out).toContain(`| llm:leaky | ${a.byAgent[leaky.agent]!.actions} | 1 |`);

    // The same episode as a bare socialized context: its world is read off its sentences; the action line carries the claim.
    const withClaim = structuredClone(leaky.context);
    const lastStep = withClaim.socialized_context.at(-1)!;
    lastStep.actions = lastStep.actions.map((l) => (l.startsWith(`${leaky.agent}:`) ? `${leaky.agent}: publicly claims that ${leaky.object} is in the ${leaky.truth}` : l));
    writeFileSync(join(dir, "ctx.json"), serializeSocializedContext(withClaim));
    expect(await main(["import", "sap", join(dir, "ctx.json"), "--store", join(dir, "store")])).toBe(0);
    const imported = (await RunStore.open(join(dir, "store"))).list().find((r) => r.kind === "import")!;
    const b = await auditJson(join(dir, "store"), imported.id);
    expect(b.episodes[0]).toMatchObject({ world: "hitom", audited: true });
    expect(b.episodes[0]!.leaks.map((l) => [l.agent, l.fact.id])).toEqual([[leaky.agent, `${leaky.object}@${leaky.truth}`]]);
  });

  it("explains a usage error", async () => {
    expect(await main(["audit"])).toBe(2);
    expect(io.err).toContain("--run: is required");
    const dir = mkdtempSync(join(tmpdir(), "sw-audit-"));
    await RunStore.open(join(dir, "store"));
    expect(await main(["audit", "--run", "nosuch", "--store", join(dir, "store")])).toBe(2);
    expect(io.err).toContain('no run "nosuch"');
    expect(await main(["audit", "--run", "x", "--world", "mars"])).toBe(2);
    expect(io.err).toContain("--world");
  });
});
