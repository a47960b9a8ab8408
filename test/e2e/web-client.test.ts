/**
 * The web client's rough edges of a first hour (issue 33), each checked in headless Chromium at a
 * desktop's and a phone's width, with screenshots in test/e2e/output/ (git-ignored): the run page
 * opens its first episode, and a benchmark item shows its question, answer, label and verdict; the
 * human baseline's seat shows the story once and one way to answer, refuses an empty answer with
 * the reason, says right or wrong after each answer, and gives the same browser its seat back at
 * once when the tab is closed and opened again.
 */
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { until, type TestServer } from "../server/harness.js";
import { chromiumAvailable, clientSession, PHONE, screenshot } from "./browser.js";

const session = clientSession();
let ts: TestServer;

// Generous limits: on a loaded machine a Chromium page and a room's first questions can take a minute.

/** The page's width fits the viewport: nothing overflows sideways. */
async function fitsWidth(page: Page): Promise<void> {
  const { scroll, client } = (await page.evaluate("({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })")) as { scroll: number; client: number };
  if (scroll > client) await screenshot(page, "overflow");
  expect(scroll, "the page scrolls sideways").toBeLessThanOrEqual(client);
}

async function benchmarkRun(options: Record<string, unknown>): Promise<{ roomId: string; runId: string }> {
  const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options: { benchmark: "tomi", ...options } } });
  expect(res.status, res.text).toBe(201);
  return { roomId: res.json.roomId, runId: res.json.runId };
}

describe.skipIf(!chromiumAvailable)("the web client's first hour in Chromium", { timeout: 120_000 }, () => {
  beforeAll(() => {
    ts = session.ts;
  });

  it("opens a run's first episode, and shows a benchmark item's question, answer, label and verdict", async () => {
    const { runId } = await benchmarkRun({ generate: { n: 6, seed: 4 }, agent: "random:3" });
    await until(async () => (await ts.api(`/api/runs/${runId}`)).json?.run?.status === "done", 30_000, "the benchmark run to finish");
    const log = (await ts.api(`/api/runs/${runId}/episodes?limit=6`)).json.episodes as { result: { question: string; answer: string; official: string; correct: boolean } }[];
    for (const viewport of [undefined, PHONE]) {
      const page = await session.page(viewport);
      await page.goto(`${ts.base}/#/run/${runId}`);
      // No click: the first episode is open, its item card above its replay.
      await page.waitForSelector("#episode #item");
      await page.waitForSelector("#episode #replay-controls");
      const first = log[0]!.result;
      expect(await page.textContent("#item-question")).toBe(first.question);
      expect(await page.textContent("#item-answer")).toBe(first.answer);
      expect(await page.textContent("#item-label")).toBe(first.official);
      expect(await page.textContent("#item .verdict")).toBe(first.correct ? "✓ right" : "✗ wrong");
      expect(await page.getAttribute("#episodes li.current", "data-episode")).toBe("0");
      // Another episode: its own card.
      const wrong = log.findIndex((e) => !e.result.correct);
      await page.click(`#episodes li[data-episode="${wrong}"] a`);
      await until(async () => (await page.textContent("#item-question")) === log[wrong]!.result.question && (await page.textContent("#item .verdict")) === "✗ wrong", 5000, "the other item's card");
      await fitsWidth(page);
      await screenshot(page, `run-benchmark-item-${viewport ? "phone" : "desktop"}`);
      await page.context().close();
    }
  });

  it("seats a person for a human baseline: the story once, one way to answer, refusals with the reason, a verdict after each answer, the seat back at once after the tab is closed", async () => {
    const { roomId, runId } = await benchmarkRun({ generate: { n: 6, seed: 4 }, agent: "human", turnDeadlineMs: 120_000, reconnectSeconds: 120 });
    const page = await session.page();
    await page.goto(`${ts.base}/#/room/${roomId}?seat=respondent`);
    await page.waitForSelector("#seat-panel #story", { timeout: 15_000 });
    const story = (await page.textContent("#seat-panel #story"))!;
    const question = (await page.textContent("#seat-panel #question"))!;
    expect(story.length).toBeGreaterThan(40);
    // The story once on the page (the timeline's copy is folded away), the question with it.
    await page.waitForSelector("#timeline li.step");
    const shown = (await page.evaluate("document.body.innerText")) as string;
    expect(shown.split(story.split("\n")[0]!).length - 1).toBe(1);
    expect(await page.textContent("#timeline li.step .question")).toBe(question);
    // ToMi's answers are the story's containers: chips, no text box competing with them.
    const chips = await page.locator("#answer-choices button").allTextContents();
    expect(chips.length).toBeGreaterThanOrEqual(2);
    expect(await page.locator("#answer-text").count()).toBe(0);
    await screenshot(page, "seat-question-desktop");

    // Answer the first question: the verdict follows, on the panel and in the timeline.
    await page.click(`#answer-choices button >> nth=0`);
    await page.waitForSelector("#action-note.ok, #action-note.error", { timeout: 15_000 }).catch(async (e) => {
      console.log(await page.textContent("#app"));
      throw e;
    });
    const note = (await page.textContent("#action-note"))!;
    expect(note).toMatch(/^(✓ Right|✗ Wrong): your answer to question 1 /);
    await page.waitForSelector('#timeline li.step[data-timestep="1"] .verdict');
    expect(await page.textContent('#timeline li.step[data-timestep="1"] .verdict')).toBe(note.startsWith("✓") ? "✓ " : "✗ ");
    await page.waitForSelector("#seat-panel .turn-head strong:has-text('question 2')", { timeout: 15_000 });
    // The progress bar is the browser's own: 1 of 6.
    expect(await page.evaluate("[document.querySelector('#bench-progress').value, document.querySelector('#bench-progress').max]")).toEqual([1, 6]);
    await page.setViewportSize(PHONE);
    await fitsWidth(page);
    await screenshot(page, "seat-question-phone");

    // Close the tab with question 2 pending and open the room again in the same browser: the seat
    // is back at once, with the question, not "taken by" this same person until it is released.
    const context = page.context();
    await page.close();
    const again = await context.newPage();
    const started = Date.now();
    await again.goto(`${ts.base}/#/room/${roomId}?seat=respondent`);
    await again.waitForSelector("#seat-panel #story", { timeout: 10_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await again.locator("#join-error").count()).toBe(0);
    expect(await again.textContent("#seat-panel .turn-head strong")).toBe("Your turn · question 2");
    // Closed again, and back through the lobby's room link (no seat in the address).
    await again.close();
    const lobby = await context.newPage();
    await lobby.goto(`${ts.base}/#/`);
    await lobby.click(`#rooms tr[data-room="${roomId}"] a.room-link`);
    await lobby.waitForSelector("#seat-panel #story", { timeout: 10_000 });
    expect(await lobby.textContent("#seat-panel h3")).toBe("You play respondent");
    await lobby.close();
    // A different browser is still refused the seat: the token is this browser's.
    const other = await session.page();
    await other.goto(`${ts.base}/#/room/${roomId}?seat=respondent`);
    await other.waitForSelector("#join-error", { timeout: 10_000 });
    expect(await other.textContent("#join-error")).toMatch(/respondent's seat is taken by/);
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
    expect(runId).toBeTruthy();
  });
  it("answers an open question (usersim's reply) in one text box, with the candidates as suggestions and an empty answer refused with the reason", async () => {
    const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options: { benchmark: "usersim", generate: { n: 2, seed: 3 }, agent: "human", turnDeadlineMs: 120_000 } } });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    const page = await session.page(PHONE);
    await page.goto(`${ts.base}/#/room/${roomId}?seat=respondent`);
    await page.waitForSelector("#seat-panel #answer-text", { timeout: 15_000 });
    expect(await page.locator("#answer-choices").count()).toBe(0);
    // Nothing typed: refused here, with the reason, and nothing sent.
    await page.click("#seat-panel .answer-form button.primary");
    expect(await page.isVisible("#answer-error")).toBe(true);
    expect(await page.textContent("#answer-error")).toBe("Type an answer first: an empty answer counts as wrong.");
    expect(await page.locator("#action-note").count()).toBe(0);
    // A suggestion fills the box (it does not answer); the person sends it.
    const suggestion = (await page.locator("#seat-panel .suggestions button").first().getAttribute("title"))!;
    await page.click("#seat-panel .suggestions button >> nth=0");
    expect(await page.inputValue("#answer-text")).toBe(suggestion);
    expect(await page.isVisible("#answer-error")).toBe(false);
    await fitsWidth(page);
    await screenshot(page, "seat-open-question-phone");
    await page.click("#seat-panel .answer-form button.primary");
    await page.waitForSelector("#action-note.ok, #action-note.error", { timeout: 15_000 });
    expect(await page.textContent("#action-note")).toMatch(/^(✓ Right|✗ Wrong): your answer to question 1 /);
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });
});

describe.skipIf(!chromiumAvailable)("the lobby and the timeline in Chromium", { timeout: 120_000 }, () => {
  beforeAll(() => {
    ts = session.ts;
  });

  it("shows a first visit what to click first, until dismissed; fits a phone without sideways scrolling or a wrapped header", async () => {
    const created = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", seed: 33, tickMs: 500, humanSeats: [0], title: "A room with a seat" } } });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    for (const [viewport, name] of [[undefined, "desktop"], [PHONE, "phone"]] as const) {
      const page = await session.page(viewport);
      await page.goto(`${ts.base}/#/`);
      await page.waitForSelector(`#rooms tr[data-room="${roomId}"] a.seat.open`);
      expect(await page.textContent("#first-visit h3")).toBe("New here? Start with a room");
      expect(await page.locator("#first-visit li").count()).toBe(3);
      // The header is one line at either width.
      const header = (await page.evaluate("document.querySelector('header.top').getBoundingClientRect().height")) as number;
      expect(header).toBeLessThan(60);
      await fitsWidth(page);
      await screenshot(page, `lobby-first-visit-${name}`);
      await page.click("#hint-dismiss");
      expect(await page.locator("#first-visit").count()).toBe(0);
      await page.reload();
      await page.waitForSelector(`#rooms tr[data-room="${roomId}"]`);
      expect(await page.locator("#first-visit").count()).toBe(0);
      await page.context().close();
    }
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });

  it("heads the world view's columns and says that an action's effect shows at the next timestep", async () => {
    const created = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", seed: 34, tickMs: 150, title: "Labelled timeline" } } });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    for (const [viewport, name] of [[undefined, "desktop"], [PHONE, "phone"]] as const) {
      const page = await session.page(viewport);
      await page.goto(`${ts.base}/#/room/${roomId}`);
      await page.waitForSelector('#timeline li.step[data-timestep="3"]', { timeout: 15_000 });
      const heads = await page.locator('#timeline li.step[data-timestep="2"] table.agents thead th').allTextContents();
      expect(heads).toEqual(["agent", "perceives · believes", "does (effect at t3)"]);
      // An agent's own view labels its action the same way.
      const agent = (await page.locator("#perspectives button.tab").nth(1).getAttribute("data-perspective"))!;
      await page.click(`#perspectives button[data-perspective="${agent}"]`);
      await page.waitForSelector("#timeline li.step .act");
      const acts = await page.locator("#timeline li.step .act").allTextContents();
      expect(acts.some((a) => /^does \(effect at t\d+\): /.test(a) || a.startsWith("does nothing"))).toBe(true);
      await page.click('#perspectives button[data-perspective="world"]');
      await fitsWidth(page);
      await screenshot(page, `timeline-headers-${name}`);
      await page.context().close();
    }
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });
});

describe.skipIf(!chromiumAvailable)("the training charts in Chromium", { timeout: 120_000 }, () => {
  beforeAll(() => {
    ts = session.ts;
  });

  it("writes a tiny KL the same way in the header, the legend and the axis, with axis labels that fit", async () => {
    const post = (step: number, kl: number) =>
      ts.api("/api/training/events", {
        method: "POST",
        admin: true,
        body: { type: "progress", event: { runId: "tiny-kl", title: "GRPO with a tiny KL", source: "ToMi", steps: 8, metrics: { step, reward: 0.25 + step / 16, accuracy: step / 8, kl, entropy: 1.5, clipFraction: 0, loss: -0.1, responseLength: 3 } } },
      });
    const kls = [0, 0.00000121, 0.00000307, 0.00000558, 0.00000412, 0.00000307];
    for (const [i, kl] of kls.entries()) expect((await post(i + 1, kl)).status).toBe(202);
    for (const [viewport, name] of [[undefined, "desktop"], [PHONE, "phone"]] as const) {
      const page = await session.page(viewport);
      await page.goto(`${ts.base}/#/training`);
      const card = page.locator('.training-run[data-run="tiny-kl"]');
      await card.locator('figure[aria-label="KL to the reference"][data-points="6"]').waitFor();
      // The header and the chart's last value: 3.07e-6 both (it was "KL 0.0000" against "0.00000307").
      expect(await card.locator(".figures").textContent()).toContain("KL 3.07e-6");
      expect(await card.locator('figure[aria-label="KL to the reference"] .chart-legend').textContent()).toBe("KL 3.07e-6");
      // Hovering a point: the legend writes its value the same way.
      const plot = card.locator('figure[aria-label="KL to the reference"] .u-over');
      const box = (await plot.boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
      const hover = await card.locator('figure[aria-label="KL to the reference"] .u-legend .u-series').nth(1).locator(".u-value").textContent();
      expect(hover).toMatch(/^\d(\.\d+)?e-6$|^0$/);
      // The y axis is as wide as its labels ("5e-6" whole, not "00000558"): the plot starts right of them.
      const axis = (await page.evaluate(`(() => {
        const fig = document.querySelector('.training-run[data-run="tiny-kl"] figure[aria-label="KL to the reference"]');
        const over = fig.querySelector('.u-over').getBoundingClientRect();
        const wrap = fig.querySelector('.u-wrap').getBoundingClientRect();
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = "11px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
        return { room: over.left - wrap.left, label: ctx.measureText("7.5e-6").width };
      })()`)) as { room: number; label: number };
      expect(axis.room).toBeGreaterThan(axis.label);
      await fitsWidth(page);
      await screenshot(page, `training-charts-${name}`);
      await page.context().close();
    }
  });
});
