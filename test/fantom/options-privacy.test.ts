/**
 * A person in a FANToM seat gets the world's `options` as quick buttons and its action schema: neither
 * may hand the person facts its character has not learned (facts nobody has said yet, or said while it
 * was away), which are what FANToM asks about.
 */
import { describe, expect, it } from "vitest";
import { Rng } from "../../worlds/core/rng.js";
import { FantomWorld, initialFantomState } from "../../worlds/fantom/world.js";

const said = (w: FantomWorld, s: ReturnType<typeof initialFantomState>, agent: string) =>
  w.options(s, agent).flatMap((a) => (a.type === "say" ? (a.facts ?? []) : []));

describe("FANToM seats held by untrusted agents", () => {
  it("offer only the facts the agent knows", () => {
    const w = new FantomWorld();
    let s = initialFantomState({ characters: ["Linda", "David"], present: ["Linda"], facts: { dog: "Linda's dog is a beagle." } });
    // Nobody has said it yet: nobody is offered it.
    expect(said(w, s, "Linda")).toEqual([]);
    expect(said(w, s, "David")).toEqual([]);
    // Linda says it while David is away: she knows it now, he still does not.
    s = w.step(s, new Map([["Linda", { type: "say", text: "My dog is a beagle.", facts: ["dog"] }]]), { rng: Rng.seeded(0), exogenous: [] }).state;
    expect(said(w, s, "Linda")).toEqual(["dog"]);
    s = w.step(s, new Map([["David", { type: "join" }]]), { rng: Rng.seeded(0), exogenous: [] }).state;
    expect(said(w, s, "David")).toEqual([]);
  });

  it("let an untrusted speaker name only facts it has heard (else it could read an unheard fact back in its own mental state)", () => {
    const w = new FantomWorld();
    let s = initialFantomState({ characters: ["Linda", "David"], present: ["Linda"], facts: { dog: "Linda's dog is a beagle.", car: "David's car is red." } });
    const say = (facts: string[]) => ({ type: "say", text: "Guess what.", facts });
    expect(w.actionSchema(s, "Linda").safeParse(say(["car"])).error?.issues[0]?.message).toBe("Linda has heard no fact yet");
    expect(w.actionSchema(s, "Linda").safeParse({ type: "say", text: "Hi." }).success).toBe(true);
    s = w.step(s, new Map([["Linda", { type: "say", text: "My dog is a beagle.", facts: ["dog"] }]]), { rng: Rng.seeded(0), exogenous: [] }).state;
    expect(w.actionSchema(s, "Linda").safeParse(say(["dog"])).success).toBe(true);
    expect(w.actionSchema(s, "Linda").safeParse(say(["car"])).error?.issues[0]?.message).toBe("not a fact Linda has heard (heard: dog)");
    expect(w.actionSchema(s, "David").safeParse(say(["dog"])).success).toBe(false);
  });
});
