/**
 * The social room in the web client (headless Chromium): a spectator sees the cascade as a tree
 * and as a feed, and asks for a user's view; a person in a seat sees their own feed only (no
 * world feed, no other user's view), and their post appears in it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "../server/harness.js";
import { chromiumAvailable, clientSession } from "./browser.js";

const session = clientSession();
let ts: TestServer;

describe.skipIf(!chromiumAvailable)("the social room in Chromium", () => {
  beforeAll(() => {
    ts = session.ts;
  });

  it("shows a spectator the cascade, the feed and a user's view, and a person their own feed, where their post appears", async () => {
    const res = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "social", options: { seed: 3, users: 60, posts: 200, every: 2, maxSteps: 5000, tickMs: 300, humanSeats: [0], turnDeadlineMs: 1000, title: "Social test room" } },
    });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    const me: string = res.json.seats[0].agent;

    const page = await session.page();
    await page.goto(`${ts.base}/#/room/${roomId}`);
    await page.waitForSelector("ul.cascade li .item.post", { timeout: 15_000 });
    expect(await page.locator("#perspectives button.tab").allTextContents()).toEqual(["Cascade", "All items", me]);
    // The seats list names the people's seats and counts the rule agent's.
    expect(await page.textContent("#seats")).toContain("59 played by the latent model's rule agent");

    await page.click('#perspectives button.tab[data-perspective="world"]');
    await page.waitForSelector("ol.feed li .item");
    const author = (await page.locator("ol.feed li .item.post strong").first().textContent())!;

    await page.fill("#view-user", author);
    // The name stays through the room's patches (a tick every 300 ms; the box was once made afresh on each).
    await page.waitForTimeout(800);
    expect(await page.inputValue("#view-user")).toBe(author);
    await page.click("#view-user-go");
    await page.waitForSelector(`#perspectives button.tab.active[data-perspective="user:${author}"]`);
    await page.waitForSelector("ol.feed li .badge.via-own");
    expect(await page.textContent("#timeline")).toContain(`${author}'s view at time`);

    // A person in seat 0: their feed, the post box, and nothing else to switch to.
    const person = await session.page();
    await person.goto(`${ts.base}/#/room/${roomId}?seat=0`);
    await person.waitForSelector("#post-box");
    expect(await person.locator("#perspectives button.tab").allTextContents()).toEqual([`${me} (you)`]);
    expect(await person.locator("#view-user").count()).toBe(0);
    await person.fill("#post-text", "A post from the browser test.");
    await person.click("#post-send");
    await person.waitForSelector("#post-result");
    expect(await person.textContent("#post-result")).toBe("posted: it goes out at the next timestep");
    await person.waitForFunction(`document.querySelector("#timeline")?.textContent?.includes("A post from the browser test.")`, undefined, { timeout: 15_000 });
    expect(await person.locator("ol.feed li .badge.via-own").count()).toBeGreaterThan(0);
    expect(await person.locator("ul.cascade").count()).toBe(0);
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  }, 90_000);
});
