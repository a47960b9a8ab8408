/**
 * The economy room in the web client (headless Chromium): a spectator watches the months go by
 * with the plots (price level, real GDP, unemployment, inflation, and the Phillips and Okun
 * scatters filling with a point a year), and a household's tab shows that household's view; a
 * person takes a household's seat from the lobby and decides with the form's two numbers.
 */
import { describe, expect, it } from "vitest";
import { until } from "../server/harness.js";
import { chromiumAvailable, clientSession, screenshot } from "./browser.js";

const session = clientSession();

describe.skipIf(!chromiumAvailable)("the economy room in Chromium", () => {
  it("plots the economy month by month and shows a household's view on its tab", async () => {
    const ts = session.ts;
    const res = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "simulation", options: { world: "economy", seed: 5, tickMs: 40, worldOptions: { households: 4, months: 60, skillBatches: 5 }, title: "Watched economy" } },
    });
    expect(res.status, res.text).toBe(201);
    const page = await session.page();
    await page.goto(`${ts.base}/#/room/${encodeURIComponent(res.json.roomId as string)}`);
    await page.waitForSelector("#economy figure.chart canvas");
    const titles = await page.locator("#economy figure.chart").evaluateAll((figs) => figs.map((f) => f.getAttribute("aria-label")));
    expect(titles).toEqual(["price level", "real GDP", "unemployment (monthly)", "inflation (yearly)", "Phillips curve", "Okun's law"]);
    // Three years in: two points (years with a year before them) in each scatter, the correlation in its title.
    const points = async (label: string) => Number(await page.getAttribute(`#economy figure[aria-label="${label}"]`, "data-points"));
    await until(async () => (await points("Phillips curve")) >= 2 && (await points("Okun's law")) >= 2, 60_000, "two years in the scatters");
    // With 4 households a variable can stay the same two years running (no correlation: "n/a"); a later year gives one.
    const title = () => page.locator(`#economy figure[aria-label="Phillips curve"] .chart-title`).textContent();
    await until(async () => /Phillips curve · corr -?\d\.\d\d/.test((await title()) ?? ""), 60_000, "a correlation in the Phillips title");
    expect(await title()).toMatch(/Phillips curve · corr -?\d\.\d\d/);
    // A line a month; the x axis is the month (the hover legend names it), the last price beside the title.
    expect(await points("price level")).toBeGreaterThanOrEqual(24);
    expect(await page.locator(`#economy figure[aria-label="price level"] .u-legend .u-series`).first().locator(".u-label").textContent()).toBe("month");
    expect(await page.locator(`#economy figure[aria-label="price level"] .chart-legend`).textContent()).toMatch(/^price \S+$/);
    await screenshot(page, "economy-charts-desktop");

    await page.click(`#perspectives button[data-perspective="household-2"]`);
    await page.waitForSelector("#timeline li.step .act");
    const text = await page.locator("#timeline li.step").first().textContent();
    expect(text).toContain("Answer with JSON only");
    expect(await page.locator("#timeline table.agents").count()).toBe(0);
  });

  it("lets a person run a household from the lobby: any propensities in [0, 1], not only the grid's", async () => {
    const ts = session.ts;
    const res = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "simulation", options: { world: "economy", seed: 9, tickMs: 1000, humanSeats: [0], turnDeadlineMs: 60_000, worldOptions: { households: 3, months: 120, skillBatches: 5 }, title: "Seated economy" } },
    });
    expect(res.status, res.text).toBe(201);
    const roomId = res.json.roomId as string;
    const page = await session.page();
    await page.goto(ts.base + "/");
    await page.fill("#name", "dana");
    await page.press("#name", "Tab");
    await page.click(`#rooms tr[data-room="${roomId}"] a.seat.open`);
    await page.waitForSelector("#seat-panel #observation", { timeout: 15_000 });
    expect(await page.textContent("#seat-panel h3")).toBe("You play household-1");
    // The household's figures as it perceives them, its last decision too (an object in an object).
    const perceived = (await page.locator("#seat-panel ul.perception").textContent()) ?? "";
    expect(perceived).toMatch(/hourlyWage → \d+(\.\d{1,4})?,/);
    expect(perceived).not.toContain("[object Object]");
    // Not a grid decision: a number input's default step of 1 would have the browser refuse 0.6
    // before the form is sent. The inputs carry the schema's bounds and take any number between.
    const work = page.locator('#seat-panel input[name="work"]');
    await work.fill("0.6");
    await page.fill('#seat-panel input[name="consumption"]', "0.35");
    await page.click("#seat-panel button.primary");
    await page.waitForSelector("#action-note.ok", { timeout: 10_000 });
    expect(await work.evaluate((e) => [e.getAttribute("min"), e.getAttribute("max"), e.getAttribute("step")])).toEqual(["0", "1", "any"]);
    const applied = page.locator("#timeline li.step .act", { hasText: "decides to work with propensity 0.60 and to spend 0.35 of its money" }).last();
    await applied.waitFor({ timeout: 10_000 });
    expect(await applied.textContent()).toContain("person");
    await screenshot(page, "economy-seat-desktop");
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });
});
