import { describe, expect, it } from "vitest";
import { HitomMinds, simulateHitom } from "../../worlds/hitom/simulation.js";
import { DataError } from "../../worlds/core/errors.js";
import { validateSocializedContext } from "../../worlds/core/socialized-context.js";
import { worldModelAnswer } from "../../worlds/hitom/questions.js";
import { replayHitom } from "../../worlds/hitom/replay.js";
import { HITOM_RULES, type HitomRules } from "../../worlds/hitom/rules.js";
import { parseQuestion } from "../../worlds/hitom/sentences.js";
import { buildHitomScenario, locateIn, parseStoryText } from "../../worlds/hitom/story.js";
import { allChains } from "../../worlds/core/rooms.js";
import { orderedChains } from "../../worlds/hitom/world.js";

/** Plays a story; `ask` gives the world model's answer, and checks that the simulation agent (text only) agrees. */
async function play(lines: readonly string[], rules?: HitomRules) {
  const story = lines.map((l, i) => `${i + 1} ${l}`).join("\n");
  const locate = locateIn("test");
  const scenario = buildHitomScenario(parseStoryText(story, locate).sentences, locate);
  const replay = await replayHitom(scenario, locate, rules ? { rules } : {});
  const minds = new HitomMinds(await simulateHitom(story));
  const ask = (question: string) => {
    const q = parseQuestion(question);
    if (!q) throw new Error(`bad question in test: ${question}`);
    const answer = worldModelAnswer(replay.episode.finalState, q);
    if (!rules) expect(minds.answer(q), question).toBe(answer);
    return answer;
  };
  return { ...replay, ask };
}

// Exit order Ella, Avery, Noah, Mia; the onion moves while some of them are away.
const FOUR = [
  "Ella, Avery, Noah and Mia entered the attic.",
  "The onion is in the red_box.",
  "Ella exited the attic.",
  "Avery moved the onion to the blue_crate.",
  "Avery exited the attic.",
  "Noah moved the onion to the green_basket.",
  "Noah exited the attic.",
  "Mia made no movements and stayed in the attic for 1 minute.",
  "Mia exited the attic.",
  "Ella, Avery, Noah and Mia entered the waiting_room.",
];

// Ella exits first, Avery second, Mia last; then Avery lies in public and Mia tells Ella the truth.
const TALK = [
  "Ella, Avery and Mia entered the attic.",
  "The onion is in the red_box.",
  "Ella moved the onion to the blue_crate.",
  "Ella exited the attic.",
  "Avery made no movements and stayed in the attic for 1 minute.",
  "Avery exited the attic.",
  "Mia saw a cat.",
  "Mia moved the onion to the green_basket.",
  "Mia exited the attic.",
  "Ella, Avery and Mia entered the waiting_room.",
  "Avery publicly claimed that onion is in the red_box.",
  "Mia privately told Ella that the onion is in the green_basket.",
];

describe("Hi-ToM world model", () => {
  it("tracks beliefs to order 4 by exit order: who saw which move, and who saw whom see it", async () => {
    const { ask, episode } = await play(FOUR);
    expect(ask("Where is the onion really?")).toBe("green_basket");
    expect(ask("Where does Ella really think the onion is?")).toBe("red_box");
    expect(ask("Where does Avery really think the onion is?")).toBe("blue_crate");
    expect(ask("Where does Mia really think the onion is?")).toBe("green_basket");
    expect(ask("Where does Mia think Ella thinks the onion is?")).toBe("red_box");
    expect(ask("Where does Ella think Mia thinks the onion is?")).toBe("red_box");
    // The mover knows that those who stayed saw the move.
    expect(ask("Where does Avery think Noah thinks the onion is?")).toBe("blue_crate");
    expect(ask("Where does Noah think Mia thinks the onion is?")).toBe("green_basket");
    expect(ask("Where does Mia think Avery thinks Noah thinks the onion is?")).toBe("blue_crate");
    expect(ask("Where does Mia think Noah thinks Avery thinks Ella thinks the onion is?")).toBe("red_box");
    expect(ask("Where does Ella think Avery thinks Noah thinks Mia thinks the onion is?")).toBe("red_box");
    expect(ask("Where does Mia think Noah thinks Avery thinks the onion is?")).toBe("blue_crate");
    // Every perspective of distinct agents, to depth 4: 4 + 12 + 24 + 24.
    expect(episode.finalState.beliefs.size).toBe(64);
  });

  it("reproduces the upstream generator's ordered-combinations error when asked to", async () => {
    expect(orderedChains(["A", "B", "C"], 4)).toEqual([["A"], ["A", "B"], ["A", "B", "C"], ["A", "C"], ["B"], ["B", "C"], ["C"]]);
    expect(allChains(["A", "B", "C"], 2)).toHaveLength(9);
    const { ask } = await play(FOUR, { ...HITOM_RULES, moveChains: "listed" });
    // Witnesses of Avery's move, listed by entry then the mover: Noah, Mia, Avery. Avery>Noah is not in that order.
    expect(ask("Where does Avery think Noah thinks the onion is?")).toBe("red_box");
    expect(ask("Where does Noah think Avery thinks the onion is?")).toBe("blue_crate");
    expect(ask("Where does Noah think Mia thinks the onion is?")).toBe("blue_crate");
    expect(ask("Where does Avery really think the onion is?")).toBe("blue_crate");
  });

  it("claims: a hearer trusts a speaker who exited later, the teller's own belief stays, the teller thinks it is believed", async () => {
    const { ask } = await play(TALK);
    expect(ask("Where is the onion really?")).toBe("green_basket");
    // Avery lies in public: Ella (exited before him) believes him, Mia (exited after) does not.
    expect(ask("Where does Mia really think the onion is?")).toBe("green_basket");
    expect(ask("Where does Avery really think the onion is?")).toBe("blue_crate");
    expect(ask("Where does Ella think Avery thinks the onion is?")).toBe("red_box");
    expect(ask("Where does Mia think Avery thinks the onion is?")).toBe("blue_crate");
    // Mia then tells Ella the truth in private: Ella believes the last trusted word.
    expect(ask("Where does Ella really think the onion is?")).toBe("green_basket");
    expect(ask("Where does Ella think Mia thinks the onion is?")).toBe("green_basket");
    // The speaker thinks every hearer believes it, trusting or not (upstream's generator: "speaker
    // would think his words are trusted"): Avery of Ella and of Mia, Mia of Ella.
    expect(ask("Where does Avery think Ella thinks the onion is?")).toBe("red_box");
    expect(ask("Where does Avery think Mia thinks the onion is?")).toBe("red_box");
    expect(ask("Where does Mia think Ella thinks the onion is?")).toBe("green_basket");
    // Nobody else's picture changes, nor any deeper one (the rule the dev labels fit).
    expect(ask("Where does Mia think Avery thinks the onion is?")).toBe("blue_crate");
    expect(ask("Where does Mia think Ella thinks Avery thinks the onion is?")).toBe("blue_crate");
    expect(ask("Where does Ella think Avery thinks Mia thinks the onion is?")).toBe("blue_crate");
    const unsure = await play(TALK, { ...HITOM_RULES, speakerThinksBelieved: false });
    expect(unsure.ask("Where does Avery think Ella thinks the onion is?")).toBe("blue_crate");
    // Under common knowledge of who believes, everyone would know that Ella believed Avery.
    const common = await play(TALK, { ...HITOM_RULES, claims: "common" });
    expect(common.ask("Where does Avery think Ella thinks the onion is?")).toBe("red_box");
    expect(common.ask("Where does Mia think Ella thinks Avery thinks the onion is?")).toBe("red_box");
  });

  it("private messages reach only their listener; public claims reach everyone present", async () => {
    const { ask, context } = await play(TALK);
    // Avery did not hear Mia's message (he thinks Mia believes his own claim); Ella heard Avery's claim.
    expect(ask("Where does Avery think Mia thinks the onion is?")).toBe("red_box");
    expect(ask("Where does Avery really think the onion is?")).toBe("blue_crate");
    const last = context.socialized_context.at(-1)!;
    expect(last.state).toBe("Mia privately told Ella that the onion is in the green_basket.");
    expect(last.observations).toEqual(["Ella: <same_as_state /> <mental_state>I believe the onion is in the green_basket.</mental_state>", "Avery: none", "Mia: <same_as_state />"]);
    const publicStep = context.socialized_context.at(-2)!;
    expect(publicStep.state).toBe("Avery publicly claimed that onion is in the red_box.");
    expect(publicStep.observations.every((o) => o.includes("<same_as_state />"))).toBe(true);
  });

  it("trust follows the exit order of the object's room, across chapters; an agent who never was there trusts", async () => {
    const { ask } = await play([
      "Ella, Avery, Noah, Mia and Liam entered the attic.",
      "The onion is in the red_box.",
      "Ella exited the attic.",
      "Avery exited the attic.",
      "Noah exited the attic.",
      "Mia exited the attic.",
      "Liam moved the onion to the blue_crate.",
      "Liam exited the attic.",
      "Ella, Avery, Noah, Mia and Liam entered the waiting_room.",
      "Avery, Noah and Mia entered the den.",
      "The carrot is in the green_box.",
      "Avery exited the den.",
      "Noah moved the carrot to the red_crate.",
      "Noah exited the den.",
      "Mia exited the den.",
      "Avery, Noah and Mia entered the waiting_room.",
      "Noah publicly claimed that carrot is in the green_box.",
      "Mia publicly claimed that onion is in the green_drawer.",
    ]);
    // About the carrot (the den): Ella and Liam never were in the den, Avery left it before Noah, Mia after.
    expect(ask("Where does Ella really think the carrot is?")).toBe("green_box");
    expect(ask("Where does Liam really think the carrot is?")).toBe("green_box");
    expect(ask("Where does Avery really think the carrot is?")).toBe("green_box");
    expect(ask("Where does Mia really think the carrot is?")).toBe("red_crate");
    expect(ask("Where does Liam think Noah thinks the carrot is?")).toBe("green_box");
    // About the onion (the attic, first chapter): Ella left the attic before Mia did, Liam after.
    expect(ask("Where does Ella really think the onion is?")).toBe("green_drawer");
    expect(ask("Where does Liam really think the onion is?")).toBe("blue_crate");
    expect(ask("Where does Noah really think the onion is?")).toBe("green_drawer");
  });

  it("shows the room to agents who come back (and the exits to everyone)", async () => {
    const story = [
      "Ella and Avery entered the attic.",
      "The onion is in the red_box.",
      "Ella exited the attic.",
      "Avery moved the onion to the blue_crate.",
      "Avery exited the attic.",
      "Ella and Avery entered the waiting_room.",
      "Ella and Mia entered the attic.",
      "The carrot is in the green_box.",
      "Ella exited the attic.",
      "Mia exited the attic.",
    ];
    const { ask, context } = await play(story);
    expect(ask("Where does Ella really think the onion is?")).toBe("blue_crate");
    expect(ask("Where does Mia think Ella thinks the onion is?")).toBe("blue_crate");
    expect(ask("Where does Avery think Ella thinks the onion is?")).toBe("red_box");
    const unseen = await play(story, { ...HITOM_RULES, seeOnEnter: false });
    expect(unseen.ask("Where does Ella really think the onion is?")).toBe("red_box");
    expect(validateSocializedContext(context)).toEqual([]);
    expect(context.agents_names).toEqual(["Ella", "Avery", "Mia"]);
    expect(context.socialized_context[0]!.actions).toEqual(["Ella: enters the attic", "Avery: enters the attic", "Mia: none"]);
    const back = context.socialized_context[7]!;
    // On entering they see every object in the room, the carrot too (the story names it a line later).
    expect(back.state).toBe("Ella exited the waiting_room. Ella and Mia entered the attic. The onion is in the blue_crate. The carrot is in the green_box.");
    // Avery, still in the waiting room, hears of Ella leaving it (exits are known to all), not what she sees.
    expect(back.observations[1]).toBe("Avery: Ella exited the waiting_room.");
    expect(context.socialized_context.at(-1)!.actions).toEqual(["Ella: none", "Avery: none", "Mia: none"]);
  });

  it("rejects a story that contradicts itself, naming the line", async () => {
    const story = (lines: string[]) => lines.map((l, i) => `${i + 1} ${l}`).join("\n");
    const build = (lines: string[]) => {
      const locate = locateIn("s.json", "data[3].story");
      return buildHitomScenario(parseStoryText(story(lines), locate).sentences, locate);
    };
    expect(() => build(["Ella entered the attic.", "Avery moved the onion to the blue_box."])).toThrow(
      new DataError("s.json", { field: "data[3].story line 2" }, "Avery moves the onion but is not in any room"),
    );
    expect(() => build(["Ella entered the attic.", "The onion is in the red_box.", "The onion is in the blue_box."])).toThrow(
      "s.json (data[3].story line 3): the story says the onion is in the blue_box, but it is in the red_box",
    );
    expect(() => build(["Ella entered the attic.", "Ella entered the attic."])).toThrow("s.json (data[3].story line 2): Ella is already in the attic");
    expect(() => build(["Ella entered the attic.", "Avery entered the den.", "Ella privately told Avery that the onion is in the box."])).toThrow(
      "s.json (data[3].story line 3): Avery is not in the attic with Ella",
    );
  });
});
