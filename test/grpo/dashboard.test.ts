/**
 * The training dashboard in headless Chromium: a run's metrics posted to the server (as
 * `train grpo --server` posts them) show as plots of reward, KL and accuracy, and a new step
 * arrives live over socket.io without a reload; a self-play round shows its pool's quiz accuracy
 * on new episodes by round, and, with held-out episodes, its accuracy on the same held-out
 * questions every round with the interval's bounds.
 */
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MetricsPublisher } from "../../trainers/grpo/publisher.js";
import type { StepMetrics } from "../../trainers/grpo/metrics.js";
import { ADMIN, startTestServer, until, type TestServer } from "../server/harness.js";
import { buildClient, chromiumAvailable, launchBrowser } from "../e2e/browser.js";
import { wilsonInterval } from "../../benchmarks/wilson-interval.js";

/** The held-out chart's title (client/src/training-view.ts): it says the questions are the same every round. */
const HELD_OUT_TITLE = "quiz accuracy on held-out episodes (the same questions every round)";

let ts: TestServer;
let ctx: BrowserContext | undefined;

const step = (n: number, reward: number, accuracy: number, kl: number) =>
  ({ step: n, reward, accuracy, kl, entropy: 1, clipFraction: 0.05, loss: -0.1, responseLength: 3 }) as unknown as StepMetrics;

describe.skipIf(!chromiumAvailable)("training dashboard", () => {
  beforeAll(async () => {
    ts = await startTestServer({ clientDir: await buildClient() });
  }, 120_000);
  afterAll(async () => {
    await ctx?.close();
    await ts?.close();
  });

  it("plots reward, KL and accuracy, and takes new steps live", async () => {
    const p = new MetricsPublisher(ts.base, ADMIN, (m) => {
      throw new Error(m);
    });
    for (const [i, m] of [step(1, 0.1, 0.2, 0), step(2, 0.3, 0.35, 0.002), step(3, 0.5, 0.5, 0.004)].entries()) p.publish({ runId: "run-a", title: "GRPO demo", source: "ToMi train", steps: 10, metrics: m ?? step(i, 0, 0, 0) });
    await until(async () => (await ts.api("/api/training/run-a")).json?.history?.length === 3, 5000, "the posted steps");

    ctx = await launchBrowser();
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    await page.goto(`${ts.base}/#/training`);
    const card = page.locator('.training-run[data-run="run-a"]');
    await card.waitFor({ timeout: 15_000 });
    expect(await card.locator("h3").textContent()).toContain("GRPO demo");
    const fig = (c: typeof card, title: string) => c.locator(`figure.chart[aria-label="${title}"]`);
    await fig(card, "reward").and(card.locator('[data-points="3"]')).waitFor({ timeout: 10_000 });
    for (const title of ["reward", "KL to the reference", "accuracy"]) expect(await fig(card, title).isVisible()).toBe(true);
    // A run that is no self-play round shows no quiz chart.
    expect(await fig(card, "quiz accuracy on new episodes").isVisible()).toBe(false);
    expect(await fig(card, HELD_OUT_TITLE).isVisible()).toBe(false);
    expect(await card.locator(".chart-legend").allTextContents()).toEqual(["reward 0.5", "KL 0.004", "accuracy 50.0%"]);

    // A new step: the plots grow without a reload.
    p.publish({ runId: "run-a", title: "GRPO demo", source: "ToMi train", steps: 10, metrics: step(4, 0.7, 0.75, 0.006) });
    await card.locator('figure.chart[aria-label="reward"][data-points="4"]').waitFor({ timeout: 10_000 });
    expect(await card.locator(".chart-legend").allTextContents()).toContain("accuracy 75.0%");
    await p.finish("run-a", "done");
    await card.locator(".status.done").waitFor({ timeout: 10_000 });

    // A self-play round: its pool's quiz accuracy on new episodes, round by round, grows live too.
    const board = ts.server.context.training;
    const quiz = (round: number, correct: number) => ({ round, episodes: 4, questions: 12, correct, accuracy: correct / 12 });
    board.step({ runId: "round-1", title: "Self-play pool: round 1", source: "self-play", steps: 2, roomIds: ["room-a"], round: 1, quizAccuracy: [quiz(0, 3)] }, step(1, 0.2, 0.25, 0));
    const round = page.locator('.training-run[data-run="round-1"]');
    await round.waitFor({ timeout: 15_000 });
    const quizChart = fig(round, "quiz accuracy on new episodes");
    await quizChart.and(round.locator('[data-points="1"]')).waitFor({ timeout: 10_000 });
    expect(await quizChart.locator(".chart-title").textContent()).toBe("quiz accuracy on new episodes · round 0: 3/12");
    board.quizAccuracy("round-1", [quiz(0, 3), quiz(1, 6)]);
    await round.locator('figure.chart[aria-label="quiz accuracy on new episodes"][data-points="2"]').waitFor({ timeout: 10_000 });
    expect(await quizChart.locator(".chart-title").textContent()).toBe("quiz accuracy on new episodes · round 1: 6/12");
    expect(await round.locator(".chart-legend").allTextContents()).toContain("quiz accuracy 50.0%");
    // No held-out episodes yet: no held-out chart.
    const heldChart = fig(round, HELD_OUT_TITLE);
    expect(await heldChart.isVisible()).toBe(false);

    // With held-out episodes: the same questions every round, with the Wilson bounds, beside the room's own quiz.
    const held = (r: number, correct: number) => ({ round: r, questions: 400, correct, accuracy: correct / 400, ...wilsonInterval(correct, 400), questionSet: "abc123" });
    board.step({ runId: "round-2", title: "Self-play pool: round 2", source: "self-play", steps: 2, roomIds: ["room-a"], round: 2, quizAccuracy: [quiz(0, 3), quiz(1, 6)], heldOutAccuracy: [held(0, 200), held(1, 220)] }, step(1, 0.2, 0.25, 0));
    const round2 = page.locator('.training-run[data-run="round-2"]');
    const heldOut = fig(round2, HELD_OUT_TITLE);
    // Three lines a round: the accuracy and its two bounds.
    await heldOut.and(round2.locator('[data-points="6"]')).waitFor({ timeout: 15_000 });
    expect(await heldOut.locator(".chart-title").textContent()).toBe(`${HELD_OUT_TITLE} · round 1: 220/400 [50.1%, 59.8%]`);
    // Above the room's own quiz.
    const titles = await round2.locator("figure.chart").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
    expect(titles.indexOf(HELD_OUT_TITLE)).toBeLessThan(titles.indexOf("quiz accuracy on new episodes"));
    board.heldOutAccuracy("round-2", [held(0, 200), held(1, 220), held(2, 248)]);
    await round2.locator(`figure.chart[aria-label="${HELD_OUT_TITLE}"][data-points="9"]`).waitFor({ timeout: 10_000 });
    expect(await heldOut.locator(".chart-legend").allTextContents()).toEqual(["held-out accuracy 62.0%", "95% high 66.6%", "95% low 57.2%"]);
    expect(errors).toEqual([]);
  });
});
