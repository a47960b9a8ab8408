/**
 * Observation accuracy against the world model's own contexts (ToMi, Hi-ToM, FANToM), for
 * generated contexts in the layouts and timestep alignments a model writes.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { observationAccuracy } from "../../benchmarks/context-eval/observation.js";
import { loadBenchmark } from "../../worlds/registry.js";
import type { SocializedContext } from "../../worlds/core/socialized-context.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { parseContext } from "../../worlds/fantom/conversation.js";
import { replayConversation } from "../../worlds/fantom/replay.js";

/** The world model's context of a ToMi story given as text. */
async function tomiTruth(story: string[]): Promise<SocializedContext> {
  const dir = mkdtempSync(join(tmpdir(), "sw-ctx-"));
  const lines = [...story.map((s, i) => `${i + 1} ${s}`), `${story.length + 1} Where was the spinach at the beginning?\tgreen_crate\t1`];
  writeFileSync(join(dir, "s.txt"), lines.join("\n") + "\n");
  const bench = await loadBenchmark("tomi");
  return (await bench.groundTruth((await bench.load(join(dir, "s.txt")))[0]!)).context;
}

const STORY = [
  "Ella entered the garage.",
  "Avery entered the garage.",
  "The spinach is in the green_crate.",
  "Ella exited the garage.",
  "Aiden loves the tangerine",
  "Avery moved the spinach to the green_treasure_chest.",
];

/** As a model writes it in the social-world-model project's format: one timestep per sentence, its own words. */
function modelContext(changes: { drop?: number; obs?: Record<string, Record<string, string>> } = {}) {
  const none = { Ella: "none", Avery: "none", Aiden: "none" };
  const steps = [
    { state: "Ella enters the garage.", observations: { ...none, Ella: "<same_as_state />" }, actions: { ...none, Ella: "enters the garage" } },
    { state: "Avery enters the garage, where Ella is.", observations: { ...none, Ella: "I see Avery come in.", Avery: "<same_as_state /> <mental_state>Ella is here.</mental_state>" }, actions: { ...none, Avery: "enters the garage" } },
    { state: "The spinach is in the green crate.", observations: { ...none, Ella: "<same_as_state />", Avery: "<same_as_state />" }, actions: none },
    { state: "Ella leaves the garage.", observations: { ...none, Ella: "I leave the garage.", Avery: "I see Ella leave." }, actions: { ...none, Ella: "exits the garage" } },
    { state: "Aiden loves the tangerine.", observations: { ...none, Aiden: "<same_as_state />" }, actions: none },
    { state: "Avery moves the spinach to the green treasure chest.", observations: { ...none, Avery: "<same_as_state />" }, actions: { ...none, Avery: "moves the spinach to the green treasure chest" } },
    { state: "none", observations: none, actions: none },
  ].map((s, i) => ({ timestep: String(i), ...s, observations: { ...s.observations, ...(changes.obs?.[i] ?? {}) } }));
  return {
    agents_names: ["Ella", "Avery", "Aiden"],
    socialized_context: steps.filter((_, i) => i !== changes.drop).map((s) => ({ ...s, observations: Object.entries(s.observations).map(([k, v]) => `${k}: ${v}`), actions: Object.entries(s.actions).map(([k, v]) => `${k}: ${v}`) })),
  };
}

/**
 * A context re-cut the other common way: one timestep per event, whose state is the event and whose
 * action is the one that caused it; dict observations and the project's older tags.
 */
function perEvent(c: SocializedContext, say: (s: string) => string = (s) => s) {
  const steps = c.socialized_context;
  return {
    agents_names: c.agents_names,
    socialized_context: steps.slice(1).map((s, t) => ({
      timestep: String(t + 1),
      state: say(s.state),
      observations: Object.fromEntries(c.agents_names.map((n, a) => [n, s.observations[a]!.slice(n.length + 2).replace("<same_as_state />", "[SAME AS STATE]")])),
      actions: Object.fromEntries(c.agents_names.map((n, a) => [n, steps[t]!.actions[a]!.slice(n.length + 2)])),
    })),
  };
}

/** Other words for the same events, as a model writes them. */
const paraphrase = (s: string) =>
  s.replace(/entered/g, "walks into").replace(/exited/g, "leaves").replace(/moved/g, "relocates").replace(/ is in /g, " sits in ").replace(/_/g, " ");

/** States that say only "same as last action" wherever someone acted. */
function lastActionStates(c: SocializedContext) {
  const steps = c.socialized_context;
  return { ...c, socialized_context: steps.map((s, i) => (i > 0 && steps[i - 1]!.actions.some((a) => !a.endsWith(": none")) ? { ...s, state: "<same_as_last_action />" } : s)) };
}

describe("observation accuracy", () => {
  it("scores a model's context of a ToMi story by events: all right, then each wrong observation and left-out event", async () => {
    const gt = await tomiTruth(STORY);
    // Ground truth: five events someone perceives (the remark about the tangerine nobody does), three agents.
    const right = observationAccuracy(gt, modelContext());
    expect(right).toMatchObject({ accuracy: 1, pairs: 15, correct: 15, events: 5, matchedEvents: 5, unobservedEvents: 1, missingEvents: 0 });
    expect(right.alignment.map((a) => [a.gtIndex, a.genIndex])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
      [4, 3],
      [5, 4],
      [6, 5],
    ]);

    // Ella watches the move after she left, Aiden too; Ella does not see Avery come in.
    const wrong = observationAccuracy(gt, modelContext({ obs: { 5: { Ella: "I see Avery move the spinach.", Aiden: "<same_as_state />" }, 1: { Ella: "none" } } }));
    expect(wrong).toMatchObject({ pairs: 15, correct: 12, extraObservations: 2, missedObservations: 1 });
    expect(wrong.accuracy).toBe(12 / 15);
    expect(wrong.byAgent).toEqual({ Ella: { pairs: 5, correct: 3 }, Avery: { pairs: 5, correct: 5 }, Aiden: { pairs: 5, correct: 4 } });

    // Leaving out "The spinach is in the green crate." loses that event for all three agents.
    const dropped = observationAccuracy(gt, modelContext({ drop: 2 }));
    expect(dropped).toMatchObject({ pairs: 15, correct: 12, missingEvents: 1, matchedEvents: 4 });

    // An empty context gets nothing right; one that calls Ella "Ellen" has no Ella, who then
    // misses the four events she saw (and is right only about the move she did not see).
    expect(observationAccuracy(gt, { agents_names: [], socialized_context: [] })).toMatchObject({ accuracy: 0, missingEvents: 5 });
    const renamed = observationAccuracy(gt, JSON.parse(JSON.stringify(modelContext()).replace(/"Ella(:|")/g, '"Ellen$1')));
    expect(renamed).toMatchObject({ missingAgents: ["Ella"], correct: 11, pairs: 15 });
    expect(renamed.byAgent.Ella).toEqual({ pairs: 5, correct: 1 });
    // Names match whatever their case; agents_names may even be left out.
    const { agents_names: _names, ...unnamed } = JSON.parse(JSON.stringify(modelContext()).replace(/Avery/g, "AVERY"));
    expect(observationAccuracy(gt, unnamed).accuracy).toBe(1);
  });

  it("gives 1 to the world model's own contexts, and to them cut one timestep per event, on all three benchmarks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-ctx-"));
    const tomi = await generateTomi(120, 31);
    writeFileSync(join(dir, "t.txt"), tomi.txt);
    writeFileSync(join(dir, "t.trace"), tomi.trace);
    writeFileSync(join(dir, "h.json"), (await generateHitom(40, 31)).json);
    writeFileSync(join(dir, "f.json"), generateFantom(200, 31).json);
    for (const [name, file] of [
      ["tomi", "t.txt"],
      ["hitom", "h.json"],
      ["fantom", "f.json"],
    ] as const) {
      const bench = await loadBenchmark(name);
      const seen = new Set<string>();
      let stories = 0;
      for (const item of await bench.load(join(dir, file))) {
        const { context, contextId } = await bench.groundTruth(item);
        if (seen.has(contextId)) continue;
        seen.add(contextId);
        stories++;
        const self = observationAccuracy(context, context);
        expect(self.accuracy, `${name} ${item.id}`).toBe(1);
        expect(self.missingEvents).toBe(0);
        const cut = observationAccuracy(context, perEvent(context));
        expect(cut.accuracy, `${name} ${item.id} per event`).toBe(1);
        // By index, the two cuts disagree: every event sits one timestep earlier.
        expect(cut.alignment.every((a) => a.genIndex === a.gtIndex - 1)).toBe(true);
        // In other words, in either cut, or with states that only point at the last action.
        const reworded = observationAccuracy(context, perEvent(context, paraphrase));
        expect(reworded.accuracy, `${name} ${item.id} reworded`).toBe(1);
        expect(reworded.alignment.every((a) => a.genIndex === a.gtIndex - 1)).toBe(true);
        const ours = { ...context, socialized_context: context.socialized_context.map((s) => ({ ...s, state: paraphrase(s.state) })) };
        expect(observationAccuracy(context, ours).accuracy, `${name} ${item.id} reworded, our cut`).toBe(1);
        expect(observationAccuracy(context, lastActionStates(context)).accuracy, `${name} ${item.id} last-action states`).toBe(1);
      }
      expect(stories, name).toBeGreaterThan(3);
    }
  });

  it("aligns a conversation written the social-world-model way: states as [SAME AS LAST ACTION], a leave merged with a line", async () => {
    const text = [
      "Linda: So, does anyone have pets these days?",
      "David: Not me, my apartment is tiny.",
      "Kailey: I have always wanted one.",
      "David: Sorry, I need to take this call. Be right back!",
      "Kailey: Sure thing, David!",
      "Linda: I have a beagle now. Honestly, walking him is the best part of my day.",
      "Kailey: That is so cool, Linda.",
      "Linda: Vet bills are no joke, though.",
      "David: I'm back! Sorry about that. What did I miss?",
      "Kailey: Nothing important, David, welcome back!",
    ];
    const { context: gt } = await replayConversation(parseContext(text.join("\n"), "t", "context"), {});
    const say = (who: string, i: number) => ({ [who]: `Says: '${text[i]!.slice(text[i]!.indexOf(":") + 2)}'` });
    const all = { Linda: "[SAME AS STATE]", David: "[SAME AS STATE]", Kailey: "[SAME AS STATE]" };
    const away = { ...all, David: "none" };
    const quiet = { Linda: "none", David: "none", Kailey: "none" };
    const steps = [
      { state: "none", observations: quiet, actions: { ...quiet, ...say("Linda", 0) } },
      { state: "[SAME AS LAST ACTION]", observations: all, actions: { ...quiet, ...say("David", 1) } },
      { state: "[SAME AS LAST ACTION]", observations: all, actions: { ...quiet, ...say("Kailey", 2) } },
      { state: "[SAME AS LAST ACTION]", observations: all, actions: { ...quiet, ...say("David", 3) } },
      { state: "David leaves the conversation", observations: { Linda: "I see that David is leaving", David: "none", Kailey: "I see that David is leaving" }, actions: { ...quiet, ...say("Kailey", 4) } },
      { state: "[SAME AS LAST ACTION]", observations: away, actions: { ...quiet, ...say("Linda", 5) } },
      { state: "[SAME AS LAST ACTION]", observations: away, actions: { ...quiet, ...say("Kailey", 6) } },
      { state: "[SAME AS LAST ACTION]", observations: away, actions: { ...quiet, ...say("Linda", 7) } },
      { state: "David returns to the conversation", observations: { Linda: "I see David is back", David: "<same_as_state />", Kailey: "I see David is back" }, actions: { ...quiet, ...say("David", 8) } },
      { state: "[SAME AS LAST ACTION]", observations: all, actions: { ...quiet, ...say("Kailey", 9) } },
      { state: "[SAME AS LAST ACTION]", observations: all, actions: quiet },
    ].map((s, i) => ({ timestep: String(i + 1), ...s }));
    const score = observationAccuracy(gt, { agents_names: ["Linda", "David", "Kailey"], socialized_context: steps });
    // Twelve events, three people. The model does not let David hear his own goodbye line or see
    // himself leave (2 missed), and puts Linda's "Vet bills" in the timestep where David is back (1 extra).
    expect(score).toMatchObject({ events: 12, pairs: 36, correct: 33, missedObservations: 2, extraObservations: 1, missingEvents: 0 });
    const byEvent = Object.fromEntries(score.alignment.map((a) => [a.event.slice(0, 24), a.genIndex]));
    expect(byEvent).toMatchObject({
      'David said: "Sorry, I ne': 4,
      "David left the conversat": 4,
      'Kailey said: "Sure thing': 5,
      'Linda said: "Vet bills a': 8,
      "David joined the convers": 8,
      'Kailey said: "Nothing im': 10,
    });
  });
});
