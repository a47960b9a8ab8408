/**
 * The web client in headless Chromium (Debian's /usr/bin/chromium through playwright-core): open
 * the lobby, watch a room advance and switch perspectives; then, in a fresh browser, take a seat
 * from the lobby, act (a refused action first), see the action applied, and check from the bytes
 * the page's sockets received that it never got another seat's private observation; and reply
 * in a usersim room from the simulated user's seat, its states one field each.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { bytesContain, decodeFrames } from "../server/wire.js";
import { framesOf, until, type TestServer } from "../server/harness.js";
import { chromiumAvailable, clientSession } from "./browser.js";

const session = clientSession();
const browser = () => session.page();
let ts: TestServer;

async function createRoom(options: Record<string, unknown>): Promise<{ roomId: string; agents: string[] }> {
  const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", ...options } } });
  expect(res.status, res.text).toBe(201);
  return { roomId: res.json.roomId, agents: res.json.seats.map((s: { agent: string }) => s.agent) };
}

describe.skipIf(!chromiumAvailable)("the web client in Chromium", () => {
  beforeAll(() => {
    ts = session.ts;
  });

  it("shows the lobby, a room advancing, and every perspective to a spectator", async () => {
    const { roomId, agents } = await createRoom({ seed: 31, tickMs: 250, loop: true, pauseMs: 500, title: "Watched room" });
    const page = await browser();
    await page.goto(ts.base + "/");
    await page.waitForSelector(`#rooms tr[data-room="${roomId}"]`);
    expect(await page.textContent(`#rooms tr[data-room="${roomId}"]`)).toContain("Watched room");
    await page.click(`#rooms tr[data-room="${roomId}"] a.room-link`);
    await page.waitForSelector("#timeline li.step");
    const count = () => page.locator("#timeline li.step").count();
    const before = await count();
    await until(async () => (await count()) > before + 2, 15_000, "the timeline to advance");

    // The world view: every agent's row at each timestep; each agent's tab: its own view only.
    // (Read in one go: the room loops, and a new story brings new agents.)
    const view = (await page.evaluate(`({
      tabs: [...document.querySelectorAll("#perspectives button.tab")].map((b) => b.textContent),
      seats: [...document.querySelectorAll("#seats li")].map((li) => li.dataset.seat),
      rows: document.querySelector("#timeline li.step table.agents")?.querySelectorAll("tbody tr").length,
    })`)) as { tabs: string[]; seats: string[]; rows: number };
    expect(view.seats.length).toBeGreaterThanOrEqual(2);
    expect(view.tabs).toEqual(["World", ...view.seats]);
    expect(view.rows).toBe(view.seats.length);
    expect(agents.length).toBeGreaterThanOrEqual(2);
    const other = view.seats[1]!;
    await page.click(`#perspectives button[data-perspective="${other}"]`);
    await page.waitForSelector("#timeline li.step .act");
    expect(await page.locator("#timeline table.agents").count()).toBe(0);
  });

  it("takes a seat from the lobby, acts, sees the action applied, and never receives another seat's private view", async () => {
    const { roomId, agents } = await createRoom({ seed: 32, tickMs: 1000, humanSeats: [0], turnDeadlineMs: 60_000 });
    const me = agents[0]!;
    // The positive control: a spectator in the same room, decoding everything it gets.
    const spectator = await ts.join(roomId);

    const page = await browser();
    // Every frame any socket of the page received (the room's, and socket.io's progress stream).
    const frames: Uint8Array[] = [];
    const roomFrames: Uint8Array[] = [];
    page.on("websocket", (ws) => {
      const isRoom = ws.url().includes("sessionId=");
      ws.on("framereceived", (f) => {
        const bytes = typeof f.payload === "string" ? new TextEncoder().encode(f.payload) : new Uint8Array(f.payload);
        frames.push(bytes);
        if (isRoom) roomFrames.push(bytes);
      });
    });
    await page.goto(ts.base + "/");
    await page.fill("#name", "erin");
    await page.press("#name", "Tab");
    await page.click(`#rooms tr[data-room="${roomId}"] a.seat.open`);
    await page.waitForSelector("#seat-panel #observation", { timeout: 15_000 });
    expect(await page.textContent("#seat-panel h3")).toBe(`You play ${me}`);
    expect(await page.locator("#perspectives button.tab").allTextContents()).toEqual([`${me} (you)`]);

    // Where the agent is decides what it cannot do (and what it can).
    const perception = await page.locator("#seat-panel ul.perception li").allTextContents();
    const here = perception.map((li) => /^room:\s*(\S+)$/.exec(li.trim())?.[1]).find((x) => x !== undefined);
    const inRoom = here !== undefined && here !== "—";
    const variants = await page.locator("#seat-panel select[name=variant] option").allTextContents();
    const pick = async (type: string) => page.selectOption("#seat-panel select[name=variant]", String(variants.findIndex((v) => v.startsWith(`${type}:`))));

    // A refused action: entering the room one is in, or leaving when in none.
    if (inRoom) {
      await pick("enter");
      await page.selectOption("#seat-panel select[name=room]", here);
    } else {
      await pick("exit");
    }
    await page.click("#seat-panel button.primary");
    await page.waitForSelector("#action-note.error");
    expect(await page.textContent("#action-note")).toMatch(/^action not possible: /);

    // A valid one.
    let expected: string;
    if (inRoom) {
      await pick("exit");
      expected = `exits the ${here}`;
    } else {
      await pick("enter");
      const room = (await page.locator("#seat-panel select[name=room] option").allTextContents())[0]!;
      await page.selectOption("#seat-panel select[name=room]", room);
      expected = `enters the ${room}`;
    }
    await page.click("#seat-panel button.primary");
    await page.waitForSelector("#action-note.ok");
    // The person's action is the last one like it: before the page took the seat, the seat's
    // scripted controller may have done the same (a loaded machine joins some timesteps late).
    const applied = page.locator("#timeline li.step .act", { hasText: expected }).last();
    await applied.waitFor({ timeout: 10_000 });
    expect(await applied.textContent()).toContain("person");
    await page.screenshot({ path: join(tmpdir(), "socialworld-e2e-seat.png") });

    // A few more turns (doing nothing), so that the story moves on while the page holds the seat.
    for (let i = 0; i < 3; i++) {
      const head = page.locator("#seat-panel .turn-head strong");
      if ((await head.count()) === 0) await page.waitForSelector("#seat-panel .turn-head", { timeout: 10_000 }).catch(() => undefined);
      if ((await head.count()) === 0) break; // the story is over
      const label = await head.textContent();
      await pick("none");
      await page.click("#seat-panel button.primary");
      await until(async () => (await head.count()) === 0 || (await head.textContent()) !== label, 10_000, "the next turn");
    }
    const all = decodeFrames(framesOf(spectator));
    const mine = decodeFrames(roomFrames);
    expect(mine.perspectivesEverSeen).toEqual(new Set([me]));
    expect(mine.messages.filter((m) => m.type === "turn").every((m) => (m.payload as { agent: string }).agent === me)).toBe(true);
    const own = new Set<string>();
    for (const s of mine.perspectives.get(me)!.steps) own.add(s.text).add(s.mentalState);
    for (const m of mine.messages) if (m.type === "turn") own.add((m.payload as { observation: { text: string } }).observation.text);
    let checked = 0;
    for (const [name, p] of all.perspectives) {
      if (name === me) continue;
      for (const s of p.steps) {
        for (const secret of [s.text, s.mentalState]) {
          if (secret.length < 12 || own.has(secret)) continue;
          checked++;
          expect(bytesContain(frames, secret), `the page received "${secret}" (${name})`).toBe(false);
        }
      }
    }
    expect(checked).toBeGreaterThan(3);
    await spectator.leave();
  });
  it("takes the simulated user's seat in a usersim room and replies with its states, one field per state", async () => {
    const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "usersim", seed: 7, tickMs: 500, turnDeadlineMs: 60_000 } } });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    const agents: string[] = res.json.seats.map((s: { agent: string }) => s.agent);
    // The simulated user is the last seat (the thread's participants come first).
    const user = agents.at(-1)!;
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
    // The room plays the seat's simulated user until the page takes it: 2 s a timestep leaves the
    // page about 12 s to join before the conversation's last reply (500 ms left it under 4 s).
    const room = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "usersim", seed: 7, tickMs: 2000, turnDeadlineMs: 60_000, humanSeats: [user] } } });
    expect(room.status, room.text).toBe(201);
    const id: string = room.json.roomId;
    const page = await browser();
    await page.goto(ts.base + "/");
    await page.fill("#name", "uma");
    await page.press("#name", "Tab");
    await page.click(`#rooms tr[data-room="${id}"] a.seat.open`);
    await page.waitForSelector("#seat-panel #observation", { timeout: 30_000 });
    expect(await page.textContent("#seat-panel h3")).toBe(`You play ${user}`);
    await page.waitForSelector("#seat-panel .turn-head", { timeout: 30_000 });
    const variants = await page.locator("#seat-panel select[name=variant] option").allTextContents();
    await page.selectOption("#seat-panel select[name=variant]", String(variants.findIndex((v) => v.startsWith("reply:"))));
    // One field per state of the hierarchy, in its order, then the response.
    const names = await page.locator("#seat-panel fieldset[data-field=states] textarea").evaluateAll((els) => els.map((e) => (e as unknown as { name: string }).name));
    expect(names).toEqual(["stance", "emotion", "belief", "value", "goal", "communication"].map((n) => `states.${n}`));
    for (const n of names) await page.fill(`#seat-panel textarea[name="${n}"]`, `my own ${n.slice(7)}`);
    await page.fill("#seat-panel textarea[name=response]", "I typed this reply myself.");
    await page.click("#seat-panel button.primary");
    await page.waitForSelector("#action-note.ok", { timeout: 30_000 });
    // (Generous waits: on a loaded machine the room's next timesteps can take seconds.)
    const applied = page.locator("#timeline li.step .act", { hasText: "I typed this reply myself." });
    await applied.first().waitFor({ timeout: 30_000 });
    // The seat's own mental state is the states it wrote: the timestep after the reply shows it. A
    // timestep is recorded once every seat has acted in it, so that step comes at once only when
    // the reply was the conversation's last (the room plays on before the page takes the seat, so
    // how many replies the simulated user made first depends on timing); otherwise the person is
    // asked again, sees the states as its mind, and does nothing.
    const replied = Number(/timestep (\d+)/.exec((await page.textContent("#action-note")) ?? "")?.[1]);
    expect(replied).toBeGreaterThan(0);
    const mine = page.locator("#timeline li.step", { hasText: "Stance: my own stance." });
    const next = page.locator("#seat-panel .turn-head strong", { hasText: `timestep ${replied + 1}` });
    await until(async () => (await mine.count()) > 0 || (await next.count()) > 0, 30_000, "the step after the reply, or the next turn");
    if ((await mine.count()) === 0) {
      expect(await page.textContent("#seat-panel")).toContain("Stance: my own stance. Emotion: my own emotion.");
      const options = await page.locator("#seat-panel select[name=variant] option").allTextContents();
      await page.selectOption("#seat-panel select[name=variant]", String(options.findIndex((v) => v.startsWith("none:"))));
      await page.click("#seat-panel button.primary");
    }
    await mine.first().waitFor({ timeout: 30_000 });
    expect(await mine.first().locator(".t").textContent()).toBe(`t${replied + 1}`);
    await ts.api(`/api/rooms/${id}`, { method: "DELETE", admin: true });
  }, 120_000);
});
