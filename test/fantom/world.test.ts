import { describe, expect, it } from "vitest";
import { inferPresence, parseContext } from "../../worlds/fantom/conversation.js";
import { replayConversation } from "../../worlds/fantom/replay.js";
import { knowsFact, presentCharacters } from "../../worlds/fantom/world.js";
import { validateSocializedContext } from "../../worlds/core/socialized-context.js";

const TEXT = [
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
].join("\n");

describe("FANToM world", () => {
  it("infers leaving and returning from the text, not from farewells", () => {
    const utts = parseContext(TEXT, "t", "context");
    const p = inferPresence(utts);
    expect(p.characters).toEqual(["Linda", "David", "Kailey"]);
    expect(p.initiallyPresent).toEqual(["Linda", "David", "Kailey"]);
    const moves = p.steps.filter((s) => s.action.type !== "say").map((s) => `${s.actor} ${s.action.type} @${s.utterance}`);
    expect(moves).toEqual(["David leave @3", "David join @8"]);
    expect(p.hearers[5]).toEqual(["Linda", "Kailey"]);
    expect(p.hearers[8]).toEqual(["Linda", "David", "Kailey"]);
  });

  it("tracks who knows a fact, and who thinks whom knows it, from who heard it together", async () => {
    const utts = parseContext(TEXT, "t", "context");
    const { episode, context } = await replayConversation(utts, {
      facts: { dog: "Linda's dog is a beagle." },
      factsByUtterance: new Map([[5, ["dog"]]]),
    });
    const s = episode.finalState;
    expect(presentCharacters(s)).toEqual(["Linda", "David", "Kailey"]);
    expect(knowsFact(s, ["Linda"], "dog")).toBe(true);
    expect(knowsFact(s, ["Kailey"], "dog")).toBe(true);
    expect(knowsFact(s, ["David"], "dog")).toBe(false);
    expect(knowsFact(s, ["Linda", "Kailey"], "dog")).toBe(true);
    expect(knowsFact(s, ["Linda", "David"], "dog")).toBe(false);
    expect(knowsFact(s, ["David", "Linda"], "dog")).toBe(false);

    expect(validateSocializedContext(context)).toEqual([]);
    expect(context.agents_names).toEqual(["Linda", "David", "Kailey"]);
    const steps = context.socialized_context;
    // One timestep per line, plus David's leaving and return, plus the closing one.
    expect(steps).toHaveLength(10 + 2 + 1);
    expect(steps[0]!.actions[0]).toBe("Linda: Says: 'So, does anyone have pets these days?'");
    expect(steps[4]!.actions[1]).toBe("David: leaves the conversation");
    expect(steps[5]!.state).toBe("David left the conversation.");
    const shared = steps.find((st) => st.state.startsWith('Linda said: "I have a beagle'))!;
    expect(shared.observations[1]).toBe("David: none");
    expect(shared.observations[0]).toMatch(/^Linda: <same_as_state \/> <mental_state>I know that Linda's dog is a beagle\. I think Kailey knows it too\.<\/mental_state>$/);
    expect(steps.some((st) => st.actions[1] === "David: joins the conversation")).toBe(true);
    expect(steps[steps.length - 1]!.actions.every((a) => a.endsWith(": none"))).toBe(true);
  });

  it("a joining speaker named by the data leaves before its longest silence when no cue says so", () => {
    const utts = parseContext("A: hi\nB: so\nA: I think so too.\nC: one\nB: two\nC: three\nA: anyway\nB: yes", "t", "context");
    expect(inferPresence(utts).steps.some((s) => s.action.type === "leave")).toBe(false);
    const p = inferPresence(utts, { joiningSpeaker: "A" });
    expect(p.hearers[3]).toEqual(["B", "C"]);
    expect(p.hearers[6]).toEqual(["A", "B", "C"]);
  });

  it("rejects lines that are not 'Name: utterance' with the field and line", () => {
    expect(() => parseContext("no colon here\nA: hi", "f.json", "[3].short_context")).toThrow("f.json ([3].short_context): line 1 is not");
  });
});
