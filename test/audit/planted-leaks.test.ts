/**
 * The leak audit against planted leaks in each ToM world, and against the symbolic agents' clean
 * runs. Episodes are the rooms' scenarios played by their scripts (worlds/<world>/scenario.ts).
 * A leak is planted where the world itself (its state, its agents' beliefs, its events and who
 * observed them; not the audit) says an agent does not know a true fact: the agent then states
 * that fact, in its action or in its text, at the episode's last timestep. Every plant must be found, with the step the fact
 * became true and a reason naming who saw it; nothing else may be reported.
 */
import { describe, expect, it } from "vitest";
import { auditContext, type AuditTurn } from "../../worlds/core/leak-audit.js";
import { playScripted, type Played } from "./scripted.js";
import { loadFacts } from "../../worlds/registry.js";
import type { DecisionPoint } from "../../trainers/grpo/decision-point.js";
import { heardBy, type FantomState } from "../../worlds/fantom/world.js";
import type { HitomEventData, HitomState } from "../../worlds/hitom/world.js";
import { beliefOf as tomiBelief } from "../../worlds/core/rooms.js";
import type { TomiState } from "../../worlds/tomi/world.js";

const play = playScripted;
/** Each world's fact vocabulary, as its entry point names it. */
const FACTS = { tomi: await loadFacts("tomi"), hitom: await loadFacts("hitom"), fantom: await loadFacts("fantom") };

function audit(p: Played, world: string, extra: readonly AuditTurn[]) {
  const { vocabulary, initialTruths } = FACTS[world as keyof typeof FACTS].forEpisode(p.context, p.scenario.initialState);
  return auditContext(p.context, vocabulary, { turns: [...p.turns, ...extra], initialTruths });
}

/** Plants for one episode: a turn stating a true fact the world says the agent does not know, and its fact id. */
type Plant = { turn: AuditTurn; fact: string };

function tomiPlants(p: Played): Plant[] {
  const s = p.episode.finalState as TomiState;
  const out: Plant[] = [];
  for (const [object, truth] of s.objectContainer) {
    for (const agent of s.agents) {
      if (tomiBelief(s, [agent], object) === truth) continue;
      // Free text, the container written with a space, as a model might.
      out.push({ turn: { agent, timestep: p.last, raw: `I bet the ${object} is in the ${truth.replace(/_/g, " ")} by now.` }, fact: `${object}@${truth}` });
    }
  }
  return out;
}

function hitomPlants(p: Played): Plant[] {
  const s = p.episode.finalState as HitomState;
  // What each agent last saw of each object, and what each heard claimed, from the world's events and their observers.
  const lastSeen = new Map<string, string>();
  const heard = new Set<string>();
  for (const rec of p.episode.steps) {
    for (const e of rec.events) {
      const data = e.data as HitomEventData;
      for (const agent of e.observers) {
        for (const [object, container] of data.facts) lastSeen.set(`${agent}:${object}`, container);
        if (data.kind === "claim") heard.add(`${agent}:${e.text}`);
      }
    }
  }
  const out: Plant[] = [];
  for (const object of s.layout.objects) {
    const truth = s.objectContainer.get(object);
    if (truth === undefined) continue;
    for (const agent of s.agents) {
      if (lastSeen.get(`${agent}:${object}`) === truth) continue;
      if ([...heard].some((h) => h.startsWith(`${agent}:`) && h.includes(` ${object} is in the ${truth}`))) continue;
      // A claim's structure states its object and container.
      out.push({ turn: { agent, timestep: p.last, action: { type: "claim", object, container: truth } }, fact: `${object}@${truth}` });
    }
  }
  return out;
}

function fantomPlants(p: Played): Plant[] {
  const s = p.episode.finalState as FantomState;
  const out: Plant[] = [];
  const said = new Set(s.characters.flatMap((c) => heardBy(s, c)));
  for (const agent of s.characters) {
    for (const [id, statement] of Object.entries(s.facts)) {
      if (!said.has(id) || heardBy(s, agent).includes(id)) continue;
      const fact = FACTS.fantom.forEpisode(p.context, s).vocabulary.facts(statement)[0]!;
      // An utterance whose structure names the fact, in words of the agent's own; and one that says it.
      out.push({ turn: { agent, timestep: p.last, action: { type: "say", text: "Guess what I heard.", facts: [id] } }, fact: fact.id });
      out.push({ turn: { agent, timestep: p.last, raw: `Oh, by the way: ${statement}` }, fact: fact.id });
    }
  }
  return out;
}

const PLANTERS: Record<string, (p: Played) => Plant[]> = { tomi: tomiPlants, hitom: hitomPlants, fantom: fantomPlants };

describe("leak audit: planted leaks in each ToM world", () => {
  for (const world of ["tomi", "hitom", "fantom"]) {
    it(`${world}: every planted leak is found, with when it became true and who saw it; the scripted actions have none`, async () => {
      let planted = 0;
      let actions = 0;
      for (let seed = 0; seed < 40; seed++) {
        const p = await play(world, seed);
        const plants = PLANTERS[world]!(p);
        const result = audit(p, world, plants.map((x) => x.turn));
        actions += result.actions;
        expect(result.leaks.map((l) => [l.agent, l.timestep, l.fact.id]).sort()).toEqual(plants.map((x) => [x.turn.agent, x.turn.timestep, x.fact]).sort());
        for (const l of result.leaks) {
          expect(l.perceivedBy).not.toContain(l.agent);
          expect(l.since).toBeLessThanOrEqual(l.timestep);
          expect(l.why).toContain(l.agent);
          if (l.source !== undefined) expect(p.context.socialized_context[l.sourceAt! - 1]!.state).toContain(l.source);
        }
        planted += plants.length;
      }
      expect(planted).toBeGreaterThan(20);
      expect(actions).toBeGreaterThan(200);
    });
  }

  it("what an agent saw, or a false statement, is no leak; what it saw before a change still counts as known", async () => {
    const p = await play("tomi", 1);
    const s = p.episode.finalState as TomiState;
    const [object, truth] = [...s.objectContainer][0]!;
    const knowers = s.agents.filter((a) => tomiBelief(s, [a], object) === truth);
    const others = s.agents.filter((a) => tomiBelief(s, [a], object) !== truth);
    expect(knowers.length).toBeGreaterThan(0);
    const notTrue = s.layout.containers.find((c) => c !== truth)!;
    const turns: AuditTurn[] = [
      ...knowers.map((agent) => ({ agent, timestep: p.last, raw: `The ${object} is in the ${truth}.` })),
      ...others.map((agent) => ({ agent, timestep: p.last, raw: `The ${object} is in the ${notTrue}.` })),
    ];
    expect(audit(p, "tomi", turns).leaks).toEqual([]);
  });
});

describe("leak audit in GRPO's world decision points", () => {
  it("a Hi-ToM reply claiming where an object is that its agent never saw leaks; a wrong place or no claim does not", async () => {
    const { WorldPoints } = await import("../../trainers/grpo/world-points.js");
    let checked = 0;
    for (let seed = 0; seed < 30 && checked < 5; seed++) {
      const points = await WorldPoints.scripted("hitom", 1, seed);
      const p = await play("hitom", seed);
      const last = new Map<string, DecisionPoint>();
      for (let i = 0; i < points.size; i++) {
        const point = await points.point(i);
        last.set(point.id.split(":")[2]!, point);
      }
      for (const plant of hitomPlants(p)) {
        const point = last.get(plant.turn.agent);
        if (!point) continue;
        // Only where the fact already held at the point's timestep (the plant is made at the end).
        const timestep = Number(point.id.split(":")[3]);
        const claim = plant.turn.action as { object: string; container: string };
        if (p.context.socialized_context.slice(timestep).some((st) => st.state.includes(`${claim.object} to the ${claim.container}`))) continue;
        expect(point.leaks!(claim, JSON.stringify(claim)), point.id).toBe(1);
        const wrong = (p.episode.finalState as HitomState).layout.containers.find((c) => c !== claim.container)!;
        expect(point.leaks!({ ...claim, container: wrong }, "")).toBe(0);
        expect(point.leaks!({ type: "stay" }, '{"type":"stay"}')).toBe(0);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});
