import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentFailure, TurnTimeout, type Agent } from "../../worlds/core/agent.js";
import { RandomAgent } from "../../agents/random-agent.js";
import { InvalidActionError, runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { validateSocializedContext } from "../../worlds/core/socialized-context.js";
import type { StepContext, StepResult, World } from "../../worlds/core/world.js";

/** A small world: agents add 1-3 to a shared counter; the one who reaches 10 wins. */
type Add = { type: "none" } | { type: "add"; n: number };
interface Counter {
  readonly total: number;
  readonly last: string;
  readonly winner?: string;
  readonly draws: number[];
}
const AddSchema = z.discriminatedUnion("type", [z.object({ type: z.literal("none") }), z.object({ type: z.literal("add"), n: z.number().int().min(1).max(3) })]);

class CounterWorld implements World<Counter, Add, never> {
  readonly name = "counter";
  agents() {
    return ["a", "b"];
  }
  actionSchema() {
    return AddSchema as z.ZodType<Add>;
  }
  noop(): Add {
    return { type: "none" };
  }
  isNoop(x: Add) {
    return x.type === "none";
  }
  options(): Add[] {
    return [1, 2, 3].map((n) => ({ type: "add", n }));
  }
  check(s: Counter, _agent: string, x: Add) {
    return x.type === "add" && s.total + x.n > 11 ? "too much" : undefined;
  }
  observe(s: Counter, agent: string) {
    if (agent === "a") return s.last ? { text: s.last, sameAsState: true } : { text: "" };
    return { text: s.total % 2 === 0 ? "even" : "" };
  }
  describe(s: Counter) {
    return s.last || "none";
  }
  renderAction(_s: Counter, _a: string, x: Add) {
    return x.type === "add" ? `adds ${x.n}` : "none";
  }
  mentalState(s: Counter, agent: string) {
    return agent === "a" ? `I count ${s.total}.` : undefined;
  }
  isTerminal(s: Counter) {
    return s.total >= 10;
  }
  step(s: Counter, actions: ReadonlyMap<string, Add>, ctx: StepContext<never>): StepResult<Counter> {
    let total = s.total;
    let winner = s.winner;
    const parts: string[] = [];
    for (const [agent, x] of actions) {
      if (x.type !== "add") continue;
      total += x.n;
      parts.push(`${agent} added ${x.n}.`);
      if (total >= 10 && !winner) winner = agent;
    }
    const draw = ctx.rng.int(100);
    return {
      state: { total, last: parts.join(" "), draws: [...s.draws, draw], ...(winner ? { winner } : {}) },
      events: parts.map((text) => ({ text, observers: ["a", "b"] })),
      rewards: { a: winner === "a" && !s.winner ? 1 : 0, b: winner === "b" && !s.winner ? 1 : 0 },
    };
  }
}

const world = new CounterWorld();
const start: Counter = { total: 0, last: "", draws: [] };
const constant = (n: number, trusted = false): Agent<Add> => ({ id: `add${n}`, trusted, act: () => ({ action: { type: "add", n } }) });

describe("runEpisode", () => {
  it("steps every agent until the world ends, and records every timestep", async () => {
    const ep = await runEpisode(world, { seed: 1, initialState: start, agents: { a: constant(2), b: constant(3) } });
    expect(ep.end).toBe("terminal");
    expect(ep.finalState.total).toBe(10);
    expect(ep.steps).toHaveLength(3); // two acting timesteps and the final observation
    expect(ep.steps[0]!.state).toBe("none");
    expect(ep.steps[1]!.state).toBe("a added 2. b added 3.");
    expect(ep.steps[2]!.actions).toEqual({ a: "none", b: "none" });
    expect(ep.returns).toEqual({ a: 0, b: 1 });
    expect(ep.turns.map((t) => [t.agent, t.timestep, t.actionText])).toEqual([
      ["a", 1, "adds 2"],
      ["b", 1, "adds 3"],
      ["a", 2, "adds 2"],
      ["b", 2, "adds 3"],
    ]);
  });

  it("yields a socialized context in the SAP layout, with mental states when they change", async () => {
    const ep = await runEpisode(world, { seed: 1, initialState: start, agents: { a: constant(2), b: constant(3) } });
    const ctx = toSocializedContext(ep);
    expect(validateSocializedContext(ctx)).toEqual([]);
    expect(ctx.socialized_context[0]).toEqual({
      timestep: "1",
      state: "none",
      observations: ["a: <mental_state>I count 0.</mental_state>", "b: even"],
      actions: ["a: adds 2", "b: adds 3"],
    });
    expect(ctx.socialized_context[1]!.observations[0]).toBe("a: <same_as_state /> <mental_state>I count 5.</mental_state>");
    expect(ctx.socialized_context[1]!.observations[1]).toBe("b: none");
  });

  it("uses the fallback when an agent times out, and logs why", async () => {
    const slow: Agent<Add> = { id: "slow", act: () => new Promise((resolve) => setTimeout(() => resolve({ action: { type: "add", n: 1 } }), 200)) };
    const ep = await runEpisode(world, {
      seed: 1,
      initialState: start,
      agents: { a: slow, b: constant(3) },
      fallback: constant(1, true),
      turnTimeoutMs: 20,
    });
    const first = ep.turns.find((t) => t.agent === "a")!;
    expect(first.source).toBe("fallback");
    expect(first.error).toBe("timeout after 20 ms");
    expect(first.failure).toBe("timeout");
    expect(first.actionText).toBe("adds 1");
  });

  it("counts an agent's own TurnTimeout (a person past the seat's deadline) as a timeout, other throws as errors", async () => {
    const late: Agent<Add> = { id: "person", act: () => Promise.reject(new TurnTimeout("the person did not act in time")) };
    const broken: Agent<Add> = { id: "broken", act: () => Promise.reject(new Error("the person did not act in time, says the message")) };
    const kinds = [];
    for (const agent of [late, broken]) {
      const ep = await runEpisode(world, { seed: 1, initialState: start, agents: { a: agent, b: constant(3) }, maxSteps: 1 });
      kinds.push(ep.turns.find((t) => t.agent === "a")!.failure);
    }
    expect(kinds).toEqual(["timeout", "error"]);
  });

  it("keeps a failed agent's prompt, reply and info in the turn beside the fallback's action", async () => {
    const failing: Agent<Add> = {
      id: "model",
      act: () => Promise.reject(new AgentFailure("the answer could not be read", { prompt: "add 1 to 3?", raw: "four, I think", info: { calls: 2 } })),
    };
    const invalid: Agent<Add> = { id: "model", act: () => ({ action: { type: "add", n: 7 } as Add, prompt: "add?", raw: '{"n": 7}' }) };
    for (const [agent, expected] of [
      [failing, { prompt: "add 1 to 3?", raw: "four, I think", info: { calls: 2 }, error: "agent error: the answer could not be read", failure: "error" }],
      [invalid, { prompt: "add?", raw: '{"n": 7}', info: undefined, error: expect.stringMatching(/^invalid action/), failure: "invalid" }],
    ] as const) {
      const ep = await runEpisode(world, { seed: 1, initialState: start, agents: { a: agent, b: constant(3) }, fallback: constant(1, true), maxSteps: 1 });
      const t = ep.turns.find((x) => x.agent === "a")!;
      expect(t).toMatchObject({ source: "fallback", action: { type: "add", n: 1 }, actionText: "adds 1", ...expected });
    }
  });

  it("rejects an invalid action with a clear error and changes nothing", async () => {
    const bad: Agent<Add> = { id: "bad", act: () => ({ action: { type: "add", n: 7 } as Add }) };
    const ep = await runEpisode(world, { seed: 1, initialState: start, agents: { a: bad, b: constant(3) }, maxSteps: 1 });
    const t = ep.turns.find((x) => x.agent === "a")!;
    expect(t.source).toBe("fallback");
    expect(t.error).toMatch(/^invalid action: .*n/);
    expect(t.actionText).toBe("none");
    expect(ep.finalState.total).toBe(3);
    expect(ep.end).toBe("max_steps");
  });

  it("rejects an action the state does not allow, or throws in strict mode", async () => {
    const s9: Counter = { total: 9, last: "", draws: [] };
    const ep = await runEpisode(world, { seed: 1, initialState: s9, agents: { a: constant(3), b: constant(1) } });
    const a = ep.turns.find((t) => t.agent === "a")!;
    expect(a.error).toBe("action not possible: too much");
    expect(a.failure).toBe("invalid");
    expect(a.actionText).toBe("none");
    expect(ep.finalState).toMatchObject({ total: 10, winner: "b" });
    const strict = runEpisode(world, { seed: 1, initialState: s9, agents: { a: constant(3), b: constant(1) }, strict: true });
    await expect(strict).rejects.toThrow(new InvalidActionError("a", 1, "action not possible: too much"));
  });

  it("catches an agent that throws and goes on", async () => {
    const broken: Agent<Add> = {
      id: "broken",
      act: () => {
        throw new Error("boom");
      },
    };
    const ep = await runEpisode(world, { seed: 1, initialState: start, agents: { a: broken, b: constant(3) }, maxSteps: 2 });
    expect(ep.turns.filter((t) => t.agent === "a").map((t) => t.error)).toEqual(["agent error: boom", "agent error: boom"]);
  });

  it("waits for an agent's answer that is a promise from another realm (a thenable, not this realm's Promise)", async () => {
    const foreign: Agent<Add> = { id: "foreign", act: () => runInNewContext("Promise.resolve({ action: { type: 'add', n: 2 } })") as Promise<{ action: Add }> };
    const ep = await runEpisode(world, { seed: 1, initialState: start, agents: { a: foreign, b: constant(3) }, maxSteps: 2 });
    expect(ep.turns.filter((t) => t.agent === "a").map((t) => [t.action, t.error])).toEqual([
      [{ type: "add", n: 2 }, undefined],
      [{ type: "add", n: 2 }, undefined],
    ]);
  });

  it("replays exactly: same seed and agents, same episode", async () => {
    const run = (seed: number) =>
      runEpisode(world, { seed, initialState: start, agents: { a: new RandomAgent<Add>(3), b: new RandomAgent<Add>(4) } });
    const [x, y, z2] = await Promise.all([run(5), run(5), run(6)]);
    const strip = (e: typeof x) => ({ steps: e.steps, state: e.finalState, turns: e.turns.map(({ latencyMs: _l, ...t }) => t) });
    expect(strip(x)).toEqual(strip(y));
    expect(x.finalState.draws).not.toEqual(z2.finalState.draws);
  });
});

describe("replayEpisode", () => {
  it("reproduces a recorded episode from its actions and seed, and finds where a record was altered", async () => {
    const { replayEpisode } = await import("../../worlds/core/replay.js");
    const ep = await runEpisode(world, { seed: 8, initialState: start, agents: { a: new RandomAgent<Add>(1), b: new RandomAgent<Add>(2) } });
    const again = replayEpisode(world, start, ep);
    expect(again.divergence).toBeUndefined();
    expect(again.finalState).toEqual(ep.finalState);
    const tampered = { ...ep, turns: ep.turns.map((t, i) => (i === 2 ? { ...t, action: { type: "add", n: (t.action as { n: number }).n === 1 ? 2 : 1 } } : t)) };
    expect(replayEpisode(world, start, tampered).divergence).toMatchObject({ timestep: ep.turns[2]!.timestep, field: `actions.${ep.turns[2]!.agent}` });
  });
});
