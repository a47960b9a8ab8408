import { describe, expect, it } from "vitest";
import { runEpisode } from "../../worlds/core/loop.js";
import { Rng } from "../../worlds/core/rng.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import type { SocialAction } from "../../worlds/social/action.js";
import { COMMENT, LIKE, REPOST } from "../../worlds/social/items.js";
import { generateNetwork } from "../../worlds/social/network.js";
import { topInterest } from "../../worlds/social/population.js";
import { SocialSim, VIA_CONTEXT, VIA_FEED, VIA_NOTIFICATION, VIA_OWN } from "../../worlds/social/sim.js";
import { topicIndex } from "../../worlds/social/vocabulary.js";
import { initialSocialState, latentIntentsOf, RuleAgent, ruleAction, SocialWorld, type SocialObservation, type SocialState } from "../../worlds/social/world.js";
import { handWorld } from "./fixtures.js";

const world = new SocialWorld();
const EV = topicIndex("electric-cars");

/** Lin posts; Wei follows Lin; Mei follows Wei; Jun follows nobody. */
function chain() {
  const sim = handWorld([{ name: "Lin" }, { name: "Wei" }, { name: "Mei" }, { name: "Jun" }], [
    ["Wei", "Lin"],
    ["Mei", "Wei"],
  ]);
  return sim;
}

describe("who has seen what", () => {
  it("answers 'has Lin seen Wei's repost?' exactly: when and how each user saw each item", () => {
    const sim = chain();
    const rng = Rng.seeded(1);
    const p0 = sim.post(0, EV, "EVs rock");
    expect(sim.seenVia(0, p0)).toBe(VIA_OWN);
    expect(sim.hasSeen(1, p0)).toBe(false);
    sim.advance(rng); // t = 1: Wei opens the app
    expect(sim.seenAt(1, p0)).toBe(1);
    expect(sim.seenVia(1, p0)).toBe(VIA_FEED);
    expect(sim.hasSeen(2, p0)).toBe(false); // Mei does not follow Lin
    const r1 = sim.react(1, p0, REPOST, "Worth reading.");
    sim.close(1);
    sim.advance(rng); // t = 2: Lin gets the notification, Mei the repost in her feed
    expect(sim.hasSeen(0, r1)).toBe(true);
    expect(sim.seenVia(0, r1)).toBe(VIA_NOTIFICATION);
    expect(sim.seenAt(0, r1)).toBe(2);
    expect(sim.seenVia(2, r1)).toBe(VIA_FEED);
    // A repost shows what it reposts: Mei has now seen Lin's post, as context.
    expect(sim.seenVia(2, p0)).toBe(VIA_CONTEXT);
    expect(sim.seenAt(2, p0)).toBe(2);
    for (const item of [p0, r1]) expect(sim.hasSeen(3, item)).toBe(false);
    expect(sim.viewersOf(p0)).toEqual([
      { user: 0, time: 0, via: VIA_OWN },
      { user: 1, time: 1, via: VIA_FEED },
      { user: 2, time: 2, via: VIA_CONTEXT },
    ]);
  });

  it("records, for a whole generated cascade, that everyone who saw an item saw its ancestors", () => {
    const { population, graph } = generateNetwork({ users: 300, seed: 4, meanFollowing: 10, communitySize: 20 });
    const sim = new SocialSim(population, graph, { seed: 3, maxDepth: 3 });
    sim.post(0, topInterest(population, 0));
    const rng = Rng.seeded(2);
    while (!sim.isQuiet()) sim.stepRuleAgents(rng);
    expect(sim.items.length).toBeGreaterThan(10);
    let pairs = 0;
    sim.seen.forEach((item, user) => {
      pairs++;
      for (let a = sim.items.parent[item]!; a >= 0; a = sim.items.parent[a]!) expect(sim.hasSeen(user, a)).toBe(true);
      // Nobody sees an item before it exists.
      expect(sim.seenAt(user, item)).toBeGreaterThanOrEqual(sim.items.time[item]!);
    });
    expect(pairs).toBe(sim.seen.size);
    // Every reaction was to something its author had seen before.
    for (let i = 1; i < sim.items.length; i++) {
      const parent = sim.items.parent[i]!;
      expect(sim.seenAt(sim.items.author[i]!, parent)).toBeLessThanOrEqual(sim.items.time[i]!);
    }
  });
});

describe("feeds and observations", () => {
  it("ranks the inbox, shows feedSize items, and keeps the rest unseen for the next session", () => {
    const authors = ["A", "B", "C", "D", "E"].map((name) => ({ name }));
    const keys = ["electric-cars", "remote-work", "ai-art", "bike-lanes", "nuclear-power"];
    // The reader cares about the topics in this order (interest 0.9, 0.7, ...).
    const interests = Object.fromEntries(keys.map((k, i) => [k, 0.9 - 0.2 * i]));
    const sim = handWorld([...authors, { name: "Reader", interests, stance: 0 }], authors.map((a): [string, string] => ["Reader", a.name]), { feedSize: 2, engagement: -50 });
    // Posted in reverse order of interest, so recency alone would rank them the other way.
    for (let k = 4; k >= 0; k--) sim.post(k, topicIndex(keys[k]!));
    const rng = Rng.seeded(1);
    sim.advance(rng);
    const state: SocialState = initialSocialState(sim);
    const screen = world.observe(state, "Reader").data as SocialObservation;
    expect(screen.entries.map((e) => e.item.author)).toEqual(["A", "B"]);
    expect(screen.entries.every((e) => e.via === "feed")).toBe(true);
    expect(sim.hasSeen(5, 2)).toBe(false);
    sim.close(5);
    sim.advance(rng);
    expect((world.observe(initialSocialState(sim), "Reader").data as SocialObservation).entries.map((e) => e.item.author)).toEqual(["C", "D"]);
  });

  it("shows a user only their own screen: no other feed, no other mind, nothing before opening the app", () => {
    const sim = chain();
    sim.post(0, EV);
    sim.advance(Rng.seeded(1));
    const state = initialSocialState(sim);
    const jun = world.observe(state, "Jun");
    expect(jun.text).toBe("");
    expect((jun.data as SocialObservation).entries).toEqual([]);
    const mei = world.observe(state, "Mei");
    expect(mei.text).toBe("");
    const wei = world.observe(state, "Wei");
    expect(wei.text).toContain("[p0] Lin posted");
    const data = wei.data as SocialObservation;
    expect(data.entries.map((e) => e.item.id)).toEqual(["p0"]);
    // The data carries no profile numbers, no other user's intents.
    const json = JSON.stringify(data);
    for (const secret of ["stance", "interest", "activity", "style", "Mei", "Jun"]) expect(json).not.toContain(secret);
    // The author's own observation holds nothing either: she is not in the app.
    expect(world.observe(state, "Lin").text).toBe("");
  });

  it("keeps the latent model's plan out of every observation and mental state, for the rule agent's side channel only", () => {
    // A network where someone reacts: find a user with an open screen and an intent.
    const sim = net();
    const rng = Rng.seeded(3);
    const state = initialSocialState(sim);
    let who: string | undefined;
    for (let t = 0; t < 20 && who === undefined; t++) {
      for (const name of world.agents(state)) {
        const obs = world.observe(state, name);
        if (latentIntentsOf(obs).length > 0) {
          who = name;
          break;
        }
      }
      if (who === undefined) sim.advance(rng);
    }
    expect(who).toBeDefined();
    const obs = world.observe(state, who!);
    const intents = latentIntentsOf(obs);
    expect(intents[0]).toEqual(ruleAction(state, who!));
    // Everything a seat is shown or a log keeps: the text, the data as JSON, a copy, the mental state.
    const shown = [obs.text, JSON.stringify(obs.data), world.mentalState(state, who!)];
    expect(shown.join("\n")).not.toMatch(/intent|mean to/i);
    for (const a of intents) if (a.action === "comment" || (a.action === "repost" && a.content)) for (const s of shown) expect(s).not.toContain(a.content);
    expect(latentIntentsOf({ ...obs })).toEqual([]);
    expect(latentIntentsOf(JSON.parse(JSON.stringify(obs)))).toEqual([]);
    // The rule agent acts on the plan of the observation it is given.
    expect(new RuleAgent().act({ world: "social", agent: who!, timestep: 1, observation: obs, actionSchema: world.actionSchema(state, who!) }).action).toEqual(intents[0]);
    expect(new RuleAgent().act({ world: "social", agent: who!, timestep: 1, observation: { ...obs }, actionSchema: world.actionSchema(state, who!) }).action).toEqual({ action: "ignore" });
  });

  it("tells a user who replied to them (notifications), with what the reply answers", () => {
    const sim = chain();
    sim.post(0, EV, "EVs rock");
    const rng = Rng.seeded(1);
    sim.advance(rng);
    sim.react(1, 0, COMMENT, "Totally");
    sim.react(2, 0, LIKE);
    sim.close(1);
    sim.advance(rng);
    const lin = world.observe(initialSocialState(sim), "Lin");
    expect(lin.text).toContain('Notification: [c1] Wei commented');
    expect(lin.text).toContain('Notification: [l2] Mei liked');
    expect(lin.text).toContain('on [p0] Lin posted');
  });
});

describe("acts", () => {
  it("refuses what a user cannot do, with the reason", () => {
    const sim = chain();
    sim.post(0, EV, "EVs rock");
    sim.advance(Rng.seeded(1));
    const s = initialSocialState(sim);
    const check = (agent: string, a: SocialAction) => world.check(s, agent, a);
    expect(check("Mei", { action: "like", target: "p0" })).toBe("you have not seen this item");
    expect(check("Lin", { action: "like", target: "p0" })).toBe("this is your own item");
    expect(check("Wei", { action: "like", target: "p9" })).toBe('there is no item "p9"');
    expect(check("Wei", { action: "like", target: "c0" })).toBe('there is no item "c0"');
    expect(check("Wei", { action: "comment", target: "p0", content: "yes" })).toBeUndefined();
    expect(check("Nobody", { action: "ignore" })).toBe('no user "Nobody" in this world');
    expect(check("Wei", { action: "post", content: "hi", topic: "cooking" })).toBe('no topic "cooking"');
    const after = world.step(s, new Map([["Wei", { action: "like", target: "p0" } as SocialAction]]), { rng: Rng.seeded(2), exogenous: [] }).state;
    expect(world.check(after, "Wei", { action: "repost", target: "p0" })).toBe("you have already reacted to this item");
    expect(world.check(after, "Lin", { action: "like", target: "l1" })).toBe("a like cannot be answered");
  });

  it("keeps reactions within the depth limit", () => {
    const sim = handWorld([{ name: "A" }, { name: "B" }, { name: "C" }], [
      ["B", "A"],
      ["C", "B"],
      ["A", "C"],
    ], { maxDepth: 0 });
    sim.post(0, EV, "x");
    const rng = Rng.seeded(1);
    sim.advance(rng);
    const c = sim.react(1, 0, COMMENT, "y");
    sim.close(1);
    sim.advance(rng);
    expect(sim.whyNotReact(2, c)).toBe("replies here would be deeper than the limit (0)");
  });

  it("constrains an untrusted agent's targets to its screen, and objects to exactly the schema", () => {
    const sim = chain();
    sim.post(0, EV, "EVs rock");
    sim.advance(Rng.seeded(1));
    const s = initialSocialState(sim);
    const schema = world.actionSchema(s, "Wei");
    expect(schema.safeParse({ action: "comment", target: "p0", content: "Agreed." }).success).toBe(true);
    expect(schema.safeParse({ action: "like", target: "p0" }).success).toBe(true);
    expect(schema.safeParse({ action: "ignore" }).success).toBe(true);
    expect(schema.safeParse({ action: "like", target: "p1" }).success).toBe(false);
    expect(schema.safeParse({ action: "like", target: "p0", content: "x" }).success).toBe(false);
    expect(schema.safeParse({ action: "comment", target: "p0", content: "  " }).success).toBe(false);
    expect(schema.safeParse({ action: "share", target: "p0" }).success).toBe(false);
    // Nothing on the screen: only closing and posting.
    const mei = world.actionSchema(s, "Mei");
    expect(mei.safeParse({ action: "ignore" }).success).toBe(true);
    expect(mei.safeParse({ action: "post", content: "hello" }).success).toBe(true);
    expect(mei.safeParse({ action: "like", target: "p0" }).success).toBe(false);
  });
});

/** A generated network of `users` with three posts at time 0. */
function net(users = 400, seed = 5) {
  const { population, graph } = generateNetwork({ users, seed, meanFollowing: 10, communitySize: 25 });
  const sim = new SocialSim(population, graph, { seed: 9 });
  for (const u of [0, 57, 199]) sim.post(u, topInterest(population, u));
  return sim;
}

describe("the World", () => {
  it("never changes the state it steps from", () => {
    let state = initialSocialState(net());
    const rng = Rng.seeded(3);
    for (let t = 0; t < 30; t++) {
      const before = JSON.stringify([state.sim.items.length, state.sim.seen.size, state.sim.time, Array.from(state.sim.session), Array.from(state.sim.stance.slice(0, 50))]);
      const actions = new Map(world.agents(state).map((a) => [a, ruleAction(state, a)]));
      const next = world.step(state, actions, { rng, exogenous: [] }).state;
      expect(JSON.stringify([state.sim.items.length, state.sim.seen.size, state.sim.time, Array.from(state.sim.session), Array.from(state.sim.stance.slice(0, 50))])).toBe(before);
      state = next;
    }
    expect(state.sim.items.length).toBeGreaterThan(3);
  });

  it("played through the World by rule agents, gives the headless engine's cascade, item for item", () => {
    const headless = net();
    const rngA = Rng.seeded(8);
    while (!headless.isQuiet()) headless.stepRuleAgents(rngA);
    let state = initialSocialState(net());
    const rngB = Rng.seeded(8);
    while (!world.isTerminal(state)) {
      const actions = new Map(world.agents(state).map((a) => [a, ruleAction(state, a)]));
      state = world.step(state, actions, { rng: rngB, exogenous: [] }).state;
    }
    const a = headless.items;
    const b = state.sim.items;
    expect(b.length).toBe(a.length);
    expect(a.length).toBeGreaterThan(20);
    for (let i = 0; i < a.length; i++) {
      expect([b.kind[i], b.author[i], b.parent[i], b.time[i]]).toEqual([a.kind[i], a.author[i], a.parent[i], a.time[i]]);
      expect(state.sim.textOf(i)).toBe(headless.textOf(i));
    }
    expect(state.sim.seen.size).toBe(headless.seen.size);
    expect(state.sim.time).toBe(headless.time);
  });

  it("runs in the game loop: agents see screens, act, and the episode ends when the cascade dies out", async () => {
    const init = initialSocialState(net(120, 2));
    const rule = new RuleAgent();
    const agents = Object.fromEntries(world.agents(init).map((a) => [a, rule]));
    const episode = await runEpisode(world, { seed: 1, initialState: init, agents, maxSteps: 2000 });
    expect(episode.end).toBe("terminal");
    const final = episode.finalState as SocialState;
    expect(final.sim.items.length).toBeGreaterThan(3);
    const ctx = toSocializedContext(episode);
    const acted = ctx.socialized_context.flatMap((s) => s.actions).filter((l) => /: (comments on|reposts|likes) /.test(l));
    expect(acted.length).toBe(final.sim.items.length - 3);
    expect(ctx.socialized_context.some((s) => s.observations.some((o) => o.includes("<mental_state>I noticed")))).toBe(true);
  });
});

describe("the room scenario", () => {
  it("posts on schedule, lets the rule agents spread each post, and ends once every cascade has died out", async () => {
    const { socialScenario } = await import("../../worlds/social/scenario.js");
    const sc = socialScenario(3, { users: 40, posts: 3, every: 30 });
    expect([...sc.schedule.keys()]).toEqual([1, 31, 61]);
    const rule = new RuleAgent();
    const agents = Object.fromEntries(world.agents(sc.initialState).map((a) => [a, rule]));
    const episode = await runEpisode(world, { seed: 1, initialState: sc.initialState, agents, director: sc.director, maxSteps: sc.maxSteps });
    expect(episode.end).toBe("terminal");
    const sim = (episode.finalState as SocialState).sim;
    // The three posts went out although the first cascade had died out before the second (every 30 > window 24).
    const posts = Array.from({ length: sim.items.length }, (_, i) => i).filter((i) => sim.items.parent[i]! < 0);
    expect(posts.map((i) => sim.items.time[i])).toEqual([0, 30, 60]);
    expect(sim.isQuiet()).toBe(true);
  });
});
