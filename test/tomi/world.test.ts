import { describe, expect, it } from "vitest";
import { answerTomi, Perspectives, readStoryText, simulateTomi, simulateTomiEpisode } from "../../worlds/tomi/simulation.js";
import { DataError } from "../../worlds/core/errors.js";
import { validateSocializedContext } from "../../worlds/core/socialized-context.js";
import { worldModelAnswer } from "../../worlds/tomi/questions.js";
import { replayTomi } from "../../worlds/tomi/replay.js";
import { parseQuestion } from "../../worlds/tomi/sentences.js";
import { buildScenario } from "../../worlds/tomi/story.js";

async function play(lines: string[]) {
  const story = lines.map((l, i) => `${i + 1} ${l}`).join("\n");
  const scenario = buildScenario(readStoryText(story), "test");
  const replay = await replayTomi(scenario, "test");
  // The agent reads its own socialized context; reading its episode records must agree.
  const views = Perspectives.fromContext(simulateTomi(story));
  const fromEpisode = Perspectives.fromEpisode(simulateTomiEpisode(story));
  const ask = (q: string) => {
    const parsed = parseQuestion(q)!;
    const wm = worldModelAnswer(replay.episode.finalState, parsed);
    // The agent reads only the text and must agree with the world model's belief tracking.
    expect(answerTomi(views, parsed)).toBe(wm);
    expect(answerTomi(fromEpisode, parsed)).toBe(wm);
    return wm;
  };
  return { ...replay, ask };
}

describe("ToMi world model", () => {
  it("tracks a false belief and the mover's knowledge of it", async () => {
    const { ask } = await play([
      "Ella entered the garage.",
      "Avery entered the garage.",
      "The spinach is in the green_crate.",
      "Ella exited the garage.",
      "Avery moved the spinach to the blue_box.",
    ]);
    expect(ask("Where will Ella look for the spinach?")).toBe("green_crate");
    expect(ask("Where will Avery look for the spinach?")).toBe("blue_box");
    expect(ask("Where does Avery think that Ella searches for the spinach?")).toBe("green_crate");
    expect(ask("Where does Ella think that Avery searches for the spinach?")).toBe("green_crate");
    expect(ask("Where is the spinach really?")).toBe("blue_box");
    expect(ask("Where was the spinach at the beginning?")).toBe("green_crate");
  });

  it("lets an agent who comes back see the room, and keeps a second-order false belief", async () => {
    const { ask } = await play([
      "Liam entered the den.",
      "Noah entered the den.",
      "The onion is in the green_crate.",
      "Liam exited the den.",
      "Noah moved the onion to the red_drawer.",
      "Noah exited the den.",
      "Liam entered the den.",
    ]);
    expect(ask("Where will Liam look for the onion?")).toBe("red_drawer");
    // Noah left before Liam came back: he still thinks Liam believes the old place.
    expect(ask("Where does Noah think that Liam searches for the onion?")).toBe("green_crate");
    expect(ask("Where does Liam think that Noah searches for the onion?")).toBe("green_crate");
  });

  it("shows what an agent sees on entering, and nothing of other rooms", async () => {
    const { context, episode } = await play([
      "Ella entered the garage.",
      "The apple is in the red_box.",
      "Mia entered the den.",
      "Ella moved the apple to the blue_crate.",
      "Mia entered the garage.",
    ]);
    expect(validateSocializedContext(context)).toEqual([]);
    const [, s2, , s4, , s6] = context.socialized_context;
    expect(s2!.state).toBe("Ella entered the garage. The apple is in the red_box.");
    expect(s4!.observations).toEqual(["Ella: none", "Mia: <same_as_state />"]);
    // Entering another room leaves the one she was in (seen by whoever was there).
    expect(s6!.state).toBe("Mia exited the den. Mia entered the garage. The apple is in the blue_crate.");
    expect(s6!.observations[1]).toBe("Mia: <same_as_state /> <mental_state>I believe the apple is in the blue_crate.</mental_state>");
    expect(episode.steps.at(-1)!.actions).toEqual({ Ella: "none", Mia: "none" });
  });

  it("places containers named by the corrected variant and follows agents it places", async () => {
    const { ask } = await play([
      "Oliver is in the attic.",
      "Ella entered the attic.",
      "The box is in the attic.",
      "The apple is in the box.",
      "The basket is in the hall.",
      "Oliver exited the attic.",
      "Ella moved the apple to the basket.",
    ]);
    expect(ask("Where will Oliver look for the apple?")).toBe("box");
    expect(ask("Where is the apple really?")).toBe("basket");
  });

  it("reads a story's text with or without line numbers, blank lines and stray white space", () => {
    const story = ["  1\tElla entered the garage.  ", "", "Avery entered the garage.\r", "\u00a012 The apple is in the red_box."].join("\n");
    expect(readStoryText(story).map((s) => [s.line, s.text, s.sentence.kind])).toEqual([
      [1, "Ella entered the garage.", "enter"],
      [3, "Avery entered the garage.", "enter"],
      [4, "The apple is in the red_box.", "located"],
    ]);
    // A number is a line number only when white space follows it.
    expect(() => readStoryText("1 Ella entered the garage.\n2nd Ella entered the garage.", "s.txt")).toThrow(
      new DataError("s.txt", { line: 2 }, 'unknown sentence: "2nd Ella entered the garage."'),
    );
  });

  it("rejects a story that contradicts itself, naming the line", async () => {
    const lines = ["1 Ella entered the garage.", "2 The apple is in the red_box.", "3 Avery moved the apple to the blue_box."].join("\n");
    expect(() => buildScenario(readStoryText(lines), "s.txt")).toThrow(new DataError("s.txt", { line: 3 }, "Avery moves the apple but is not in any room"));
    const exitWrong = ["1 Ella entered the garage.", "2 Ella exited the den."].join("\n");
    await expect(replayTomi(buildScenario(readStoryText(exitWrong), "s.txt"), "s.txt")).rejects.toThrow(
      's.txt:2: "Ella exited the den.": action not possible: Ella is in the garage, not the den',
    );
  });
});

describe("replaying a story", () => {
  it("gives the same episode as a pure fold (playScript) and through the game loop, which replays from its actions alone", async () => {
    const story = ["Ella entered the garage.", "The apple is in the red_box.", "Mia entered the garage.", "Ella exited the garage.", "Mia moved the apple to the blue_crate.", "Ella loves the apple"]
      .map((l, i) => `${i + 1} ${l}`)
      .join("\n");
    const scenario = buildScenario(readStoryText(story), "test");
    const folded = await replayTomi(scenario, "test");
    const shown: number[] = [];
    const looped = await replayTomi(scenario, "test", { onTimestep: (rec) => void shown.push(rec.timestep) });
    expect(shown).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Everything but the measured latencies.
    const plain = (e: unknown) => JSON.parse(JSON.stringify(e, (k, v: unknown) => (k === "latencyMs" ? undefined : v)));
    expect(plain(folded.episode)).toEqual(plain(looped.episode));
    expect(folded.context).toEqual(looped.context);
    // And the recorded episode replays from its actions and the narrator's statements alone.
    const { replayEpisode } = await import("../../worlds/core/replay.js");
    const { initialTomiState } = await import("../../worlds/tomi/world.js");
    const { tomiWorld } = await import("../../worlds/tomi/replay.js");
    const again = replayEpisode(tomiWorld, initialTomiState(scenario.init), folded.episode);
    expect(again.divergence).toBeUndefined();
    expect(again.finalState.beliefs).toEqual(folded.episode.finalState.beliefs);
  });
});

describe("ToMi world, live play", () => {
  it("lets several agents act in one timestep, each seeing who is in the room by then", async () => {
    const { TomiWorld, initialTomiState } = await import("../../worlds/tomi/world.js");
    const { beliefOf } = await import("../../worlds/core/rooms.js");
    const { Rng } = await import("../../worlds/core/rng.js");
    const world = new TomiWorld();
    const s0 = initialTomiState({
      agents: ["Ann", "Bob", "Cy"],
      layout: { rooms: ["den", "hall"], containers: ["box", "bag"], objects: ["key"] },
      containerRoom: new Map([["box", "den"], ["bag", "den"]]),
      objectContainer: new Map([["key", "box"]]),
      agentRoom: new Map([["Cy", "den"]]),
    });
    const rng = Rng.seeded(1);
    const r = world.step(s0, new Map([["Ann", { type: "enter", room: "den" }], ["Bob", { type: "enter", room: "den" }]] as const), { rng, exogenous: [] });
    expect(r.events.map((e) => [e.text, e.observers])).toEqual([
      ["Ann entered the den. The key is in the box.", ["Ann", "Cy"]],
      ["Bob entered the den. The key is in the box.", ["Ann", "Bob", "Cy"]],
    ]);
    expect(beliefOf(r.state, ["Ann", "Bob"], "key")).toBe("box");
    const r2 = world.step(r.state, new Map([["Cy", { type: "exit" }], ["Ann", { type: "move", object: "key", container: "bag" }]] as const), { rng, exogenous: [] });
    // Agents act in the world's agent order: Ann moves the key while Cy is still there.
    expect(r2.events.map((e) => [e.text, e.observers])).toEqual([
      ["Ann moved the key to the bag.", ["Ann", "Bob", "Cy"]],
      ["Cy exited the den.", ["Ann", "Bob", "Cy"]],
    ]);
    const r3 = world.step(r2.state, new Map([["Bob", { type: "move", object: "key", container: "box" }]] as const), { rng, exogenous: [] });
    expect(r3.events[0]!.observers).toEqual(["Ann", "Bob"]);
    expect(beliefOf(r3.state, ["Cy"], "key")).toBe("bag");
    expect(beliefOf(r3.state, ["Ann", "Bob"], "key")).toBe("box");
  });
});

describe("ToMi questions about freely played episodes", () => {
  it("tell an object's place before an agent moves it, the narrator's truth, and one move where two agents make the same", async () => {
    const { TomiWorld, initialTomiState } = await import("../../worlds/tomi/world.js");
    const { beliefOf } = await import("../../worlds/core/rooms.js");
    const { runEpisode } = await import("../../worlds/core/loop.js");
    const { ScriptedAgent } = await import("../../worlds/core/scripted-agent.js");
    const { tomiQuestions } = await import("../../worlds/tomi/episode-questions.js");
    type A = import("../../worlds/tomi/world.js").TomiAction;
    const world = new TomiWorld();
    const s0 = initialTomiState({
      agents: ["Ann", "Bob"],
      layout: { rooms: ["den"], containers: ["box", "bag"], objects: ["key"] },
      containerRoom: new Map([["box", "den"], ["bag", "den"]]),
      objectContainer: new Map([["key", "box"]]),
    });
    const none = world.noop();
    const plays = (m: [number, A][]) => new ScriptedAgent<A>(new Map(m), none);
    const episode = await runEpisode(world, {
      seed: 1,
      initialState: s0,
      maxSteps: 4,
      agents: {
        // Both move the key to the bag at once; Bob leaves; Ann puts it back: Bob's belief is false.
        Ann: plays([[1, { type: "enter", room: "den" }], [2, { type: "move", object: "key", container: "bag" }], [4, { type: "move", object: "key", container: "box" }]]),
        Bob: plays([[1, { type: "enter", room: "den" }], [2, { type: "move", object: "key", container: "bag" }], [3, { type: "exit" }]]),
      },
      // A script's narrator that says where the key was put, after the agents have moved it.
      director: { exogenous: (_s, t) => (t === 3 ? [{ type: "object_at" as const, object: "key", container: "box" }] : []) },
    });
    // A timestep's events are told in the next one's state.
    expect(episode.steps[3]!.state).toContain("The key is in the bag.");
    expect(beliefOf(episode.finalState, ["Bob"], "key")).toBe("bag");
    const quiz = await tomiQuestions.fromEpisode(episode, s0, "free play");
    const told = (quiz as unknown as { sentences: unknown }).sentences as readonly { kind: string; subject?: string; place?: string }[];
    expect(told[0]).toEqual({ kind: "located", subject: "key", place: "box" });
    expect(told.filter((s) => s.kind === "move")).toHaveLength(2);
    expect(told.filter((s) => s.kind === "located").map((s) => s.place)).toEqual(["box", "bag"]);
    const bob = quiz.questions.find((q) => q.type === "first_order_tom" && q.about[0] === "Bob");
    expect(bob?.answer).toBe("bag");
  });
});
