/**
 * The social world's leak audit: an episode of rule agents (who act only on what is on their
 * screen) has no leak; an action or a text naming an item its user never had on screen is one,
 * found with the timestep the item appeared; one naming an item they were shown is not.
 */
import { describe, expect, it } from "vitest";
import { auditContext } from "../../worlds/core/leak-audit.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { loadFacts } from "../../worlds/registry.js";
import { playableScenario, socialScenario, type SocialState } from "../../worlds/social/index.js";

const facts = await loadFacts("social");

async function played() {
  const sc = playableScenario(socialScenario(4, { users: 40, posts: 3, every: 3 }));
  const episode = await runEpisode(sc.world, { seed: 4, initialState: sc.initialState, agents: sc.scripted, director: sc.director!, maxSteps: 80 });
  const context = toSocializedContext(episode);
  const turns = episode.turns.map((t) => ({ agent: t.agent, timestep: t.timestep, action: t.action, actionText: t.actionText }));
  return { episode, context, turns, last: episode.steps.at(-1)!.timestep, sim: (episode.finalState as SocialState).sim };
}

describe("social leak facts", () => {
  it("finds no leak in the rule agents' episode, and every planted one", async () => {
    const p = await played();
    const { vocabulary, initialTruths } = facts!.forEpisode(p.context);
    expect(auditContext(p.context, vocabulary, { turns: p.turns, initialTruths }).leaks).toEqual([]);

    // Users who reacted, and an item one of them never had on screen (the world's record says so), and one they had (likes are never on a screen: a post, comment or repost).
    const names = p.context.agents_names;
    const reactor = p.turns.find((t) => (t.action as { action: string }).action !== "ignore")!;
    const u = names.indexOf(reactor.agent);
    const unseen = Array.from({ length: p.sim.items.length }, (_, i) => i).find((i) => !p.sim.hasSeen(u, i) && p.sim.items.kind[i] !== 3)!;
    const seen = Array.from({ length: p.sim.items.length }, (_, i) => i).find((i) => p.sim.hasSeen(u, i) && p.sim.items.author[i] !== u)!;
    expect(unseen).toBeDefined();
    expect(seen).toBeDefined();
    const unseenId = p.sim.items.id(unseen);
    const seenId = p.sim.items.id(seen);
    const planted = [
      { agent: reactor.agent, timestep: p.last, action: { action: "like", target: unseenId } },
      { agent: reactor.agent, timestep: p.last, raw: `{"action": "comment", "target": "${seenId}", "content": "As ${unseenId} said, this matters."}` },
    ];
    const audit = auditContext(p.context, vocabulary, { turns: [...p.turns, ...planted], initialTruths });
    expect(audit.leaks.map((l) => [l.agent, l.fact.id, l.via])).toEqual([
      [reactor.agent, `item:${unseenId}`, "action"],
      [reactor.agent, `item:${unseenId}`, "text"],
    ]);
    // Found with when the item appeared: written at world time T (by the loop's timestep T + 1),
    // told by the next timestep's state. The seen item in the same text is no leak.
    expect(audit.leaks[0]!.since).toBe(p.sim.items.time[unseen]! + 2);
    expect(audit.leaks.some((l) => l.fact.id === `item:${seenId}`)).toBe(false);
  });

  it("reads its own state sentences and splits a timestep into its events", () => {
    const { vocabulary } = facts!.forEpisode({ agents_names: [], socialized_context: [] });
    const text = 'Lin Chen posted p3: "Nuclear power. Is it safe?" Wei Wang 2 commented on p3 (c5): "No. p9 is wrong." Ada Park liked c5 (l6)';
    expect(vocabulary.split!(text)).toEqual(['Lin Chen posted p3: "Nuclear power. Is it safe?"', 'Wei Wang 2 commented on p3 (c5): "No. p9 is wrong."', "Ada Park liked c5 (l6)"]);
    // An event makes its own item true, not the ids its quoted text names.
    expect(vocabulary.update('Wei Wang 2 commented on p3 (c5): "No. p9 is wrong."').begin.map((f) => f.id)).toEqual(["item:p3", "item:c5"]);
    expect(facts!.reads("Ada Park liked c5 (l6)")).toBe(true);
    expect(facts!.reads("Alice entered the kitchen.")).toBe(false);
  });
});
