/**
 * Replay of logged runs in the web client, in headless Chromium: a Hi-ToM room audited live
 * (one seat played by a seeded random agent, which claims any container and so leaks) and a
 * benchmark room's ToMi stories. Step, play and pause the timeline, switch perspectives, read each
 * agent's observations, mental states and actions at a step, see the leak marks where the audit
 * found them, and come back to the same seat and timestep from the address.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { until, type TestServer } from "../server/harness.js";
import { chromiumAvailable, clientSession } from "./browser.js";

const session = clientSession();
const browser = () => session.page();
let ts: TestServer;

type Ctx = { agents_names: string[]; socialized_context: { timestep: string; state: string; observations: string[]; actions: string[] }[] };
type Audit = { leaks: { agent: string; timestep: number; fact: { id: string; text: string } }[] };

/** What an agent perceived at a step, as the context writes it (same-as-state resolved, mental states out). */
function perceived(ctx: Ctx, step: number, agent: string): string {
  const s = ctx.socialized_context[step]!;
  const line = s.observations.find((o) => o.startsWith(`${agent}:`))!.slice(agent.length + 1);
  const text = line.replace(/<mental_state>[\s\S]*?<\/mental_state>/g, "").split("<same_as_state />").join(s.state === "none" ? "" : s.state).trim();
  return text === "none" ? "" : text;
}

const clock = (page: Page) => page.textContent("#replay-clock");

describe.skipIf(!chromiumAvailable)("replay of logged runs in Chromium", () => {
  beforeAll(() => {
    ts = session.ts;
  });

  it("steps, plays and pauses an audited room episode from the world's view and each seat, with the leak marks", async () => {
    const created = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "simulation", options: { world: "hitom", seed: 2, audit: true, defaultAgent: "random:7", tickMs: 0, turnDeadlineMs: 200, loop: true, pauseMs: 20 } },
    });
    expect(created.status, created.text).toBe(201);
    const runId: string = created.json.runId;
    // Live, a spectator sees the audit's marks on the world's timeline as the room plays.
    const live = await browser();
    await live.goto(`${ts.base}/#/room/${created.json.roomId}`);
    await live.waitForSelector("#timeline li.step table.agents .leak", { timeout: 60_000 });
    expect(await live.locator("#timeline .leak").first().textContent()).toMatch(/^leak states that the \S+ is in the \S+$/);
    let index = -1;
    await until(
      async () => {
        const log = await ts.api(`/api/runs/${runId}/episodes?limit=100`);
        index = (log.json.episodes as { audit?: Audit }[]).findIndex((e) => (e.audit?.leaks.length ?? 0) > 0);
        return index >= 0;
      },
      60_000,
      "a logged episode with leaks",
    );
    await ts.api(`/api/rooms/${created.json.roomId}`, { method: "DELETE", admin: true });
    const ctx = (await ts.api(`/api/runs/${runId}/episodes/${index}`)).json as Ctx;
    const audit = (await ts.api(`/api/runs/${runId}/episodes/${index}/audit`)).json as Audit;
    const n = ctx.socialized_context.length;

    const page = await browser();
    await page.goto(`${ts.base}/#/run/${runId}`);
    await page.click(`#episodes li[data-episode="${index}"] a`);
    await page.waitForSelector("#replay-controls");
    expect(await clock(page)).toBe(`t1 · 1 of ${n}`);
    expect(await page.textContent("#replay-audit")).toContain(`${audit.leaks.length} leak`);
    // The marks on the timeline: one per timestep with leaks.
    const leakSteps = [...new Set(audit.leaks.map((l) => l.timestep))].sort((a, b) => a - b);
    expect((await page.locator("#replay-marks .mark").evaluateAll((els) => els.map((e) => Number((e as unknown as { dataset: Record<string, string> }).dataset.timestep))))).toEqual(leakSteps);

    // Stepping: on, on, back; the steps shown are those up to the current one, which is marked.
    await page.click("#replay-step");
    await page.click("#replay-step");
    await page.click("#replay-back");
    expect(await clock(page)).toBe(`t2 · 2 of ${n}`);
    expect(await page.locator("#replay-steps li.step").count()).toBe(2);
    expect(await page.getAttribute("#replay-steps li.step.current", "data-timestep")).toBe("2");

    // Playing advances by itself; pausing stops it.
    await page.selectOption("#replay-speed", "250");
    await page.click("#replay-play");
    await until(async () => (await clock(page))!.startsWith("t5 ") || Number(/(\d+) of/.exec((await clock(page))!)![1]) > 4, 10_000, "the replay to play on");
    await page.click("#replay-play");
    const paused = await clock(page);
    await page.waitForTimeout(700);
    expect(await clock(page)).toBe(paused);
    expect(await page.textContent("#replay-play")).toContain("play");

    // A mark takes the replay to its timestep; the world's view there shows every agent and the leaks found.
    const first = audit.leaks.filter((l) => l.timestep === leakSteps[0]);
    await page.click(`#replay-marks .mark[data-timestep="${leakSteps[0]}"]`);
    expect(await page.getAttribute("#replay-steps li.step.current", "data-timestep")).toBe(String(leakSteps[0]));
    const current = page.locator("#replay-steps li.step.current");
    expect(await current.locator("table.agents tbody tr").count()).toBe(ctx.agents_names.length);
    expect((await current.locator(".leak").evaluateAll((els) => els.map((e) => (e as unknown as { dataset: Record<string, string> }).dataset.fact))).sort()).toEqual(first.map((l) => l.fact.id).sort());
    await page.screenshot({ path: join(tmpdir(), "socialworld-e2e-replay.png") });

    // The leaking agent's seat: only its own view (no other agent's row), its observation at each step, its leak.
    const agent = first[0]!.agent;
    await page.click(`#replay-perspectives button[data-perspective="${agent}"]`);
    expect(await current.locator("table.agents").count()).toBe(0);
    const steps = await page.locator("#replay-steps li.step").count();
    for (let i = 0; i < steps; i++) {
      const shown = (await page.locator("#replay-steps li.step").nth(i).locator(".perceived").textContent())!;
      const want = perceived(ctx, i, agent);
      if (want === "") expect(shown).toBe("perceives nothing");
      else expect(shown).toBe(want);
    }
    expect(await page.locator("#replay-steps li.step.current .leak").count()).toBe(first.filter((l) => l.agent === agent).length);
    // An agent who did not leak there has no mark at that step.
    const other = ctx.agents_names.find((a) => !first.some((l) => l.agent === a));
    if (other) {
      await page.click(`#replay-perspectives button[data-perspective="${other}"]`);
      expect(await page.locator("#replay-steps li.step.current .leak").count()).toBe(0);
    }

    // The address holds the seat and the timestep: a reload comes back to them.
    await page.click(`#replay-perspectives button[data-perspective="${agent}"]`);
    expect(page.url()).toContain(`/episode/${index}?seat=${encodeURIComponent(agent)}&t=${leakSteps[0]}`);
    await page.reload();
    await page.waitForSelector("#replay-steps li.step.current");
    expect(await page.getAttribute("#replay-perspectives button.tab.active", "data-perspective")).toBe(agent);
    expect(await page.getAttribute("#replay-steps li.step.current", "data-timestep")).toBe(String(leakSteps[0]));
    await page.click("#replay-last");
    expect(await clock(page)).toBe(`t${ctx.socialized_context.at(-1)!.timestep} · ${n} of ${n}`);
  });

  it("replays a benchmark run's story from a character's seat, with its beliefs as they change", async () => {
    const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 6, seed: 4 }, agent: "simulation" } } });
    expect(res.status, res.text).toBe(201);
    const runId: string = res.json.runId;
    await until(async () => (await ts.api(`/api/runs/${runId}`)).json?.run?.status === "done", 30_000, "the benchmark run to finish");
    const ctx = (await ts.api(`/api/runs/${runId}/episodes/0`)).json as Ctx;
    // The character whose beliefs change most often.
    const changes = (a: string) => ctx.socialized_context.filter((s) => s.observations.some((o) => o.startsWith(`${a}:`) && o.includes("<mental_state>"))).length;
    const agent = [...ctx.agents_names].sort((x, y) => changes(y) - changes(x))[0]!;
    const page = await browser();
    await page.goto(`${ts.base}/#/run/${runId}/episode/0?seat=${encodeURIComponent(agent)}&t=${ctx.socialized_context.length}`);
    await page.waitForSelector("#replay-steps li.step.current");
    expect(await page.getAttribute("#replay-perspectives button.tab.active", "data-perspective")).toBe(agent);
    expect(await page.textContent("#replay-audit")).toContain("leak audit (tomi)");
    expect(await page.textContent("#replay-audit")).toContain("0 leaks");
    // Each belief is shown at the step it changed; the current step shows the one held then.
    const minds = await page.locator("#replay-steps li.step .mind").allTextContents();
    const written = ctx.socialized_context.flatMap((s) => [...(s.observations.find((o) => o.startsWith(`${agent}:`)) ?? "").matchAll(/<mental_state>([\s\S]*?)<\/mental_state>/g)].map((m) => m[1]!.trim()));
    expect(minds.length).toBeGreaterThanOrEqual(written.length);
    for (const m of written) expect(minds).toContain(m);
    expect(await page.locator("#replay-steps li.step.current .mind").textContent()).toBe(written.at(-1));
  });
});
