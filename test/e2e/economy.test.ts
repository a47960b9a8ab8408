/**
 * The economy room in the web client (headless Chromium): a spectator watches the months go by
 * with the plots (price level, real GDP, unemployment, inflation, and the Phillips and Okun
 * scatters filling with a point a year), and a household's tab shows that household's view.
 */
import { describe, expect, it } from "vitest";
import { until } from "../server/harness.js";
import { chromiumAvailable, clientSession } from "./browser.js";

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
    await page.waitForSelector("#economy svg.chart");
    const titles = await page.locator("#economy svg.chart").evaluateAll((svgs) => svgs.map((s) => s.getAttribute("aria-label")));
    expect(titles).toEqual(["price level", "real GDP", "unemployment (monthly)", "inflation (yearly)", "Phillips curve", "Okun's law"]);
    // Three years in: two points (years with a year before them) in each scatter, the correlation in its title.
    const dots = (label: string) => page.locator(`#economy svg[aria-label="${label}"] circle.chart-dot`).count();
    await until(async () => (await dots("Phillips curve")) >= 2 && (await dots("Okun's law")) >= 2, 60_000, "two years in the scatters");
    expect(await page.locator(`#economy svg[aria-label="Phillips curve"] .chart-title`).textContent()).toMatch(/Phillips curve · corr -?\d\.\d\d/);
    expect(await page.locator(`#economy svg[aria-label="price level"] path.chart-line`).count()).toBe(1);
    expect(await page.locator(`#economy svg[aria-label="price level"] .chart-axis`).allTextContents()).toContain("month 1");

    await page.click(`#perspectives button[data-perspective="household-2"]`);
    await page.waitForSelector("#timeline li.step .act");
    const text = await page.locator("#timeline li.step").first().textContent();
    expect(text).toContain("Answer with JSON only");
    expect(await page.locator("#timeline table.agents").count()).toBe(0);
  });
});
