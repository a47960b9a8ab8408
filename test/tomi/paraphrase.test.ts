import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readTomiFile, type TomiItem } from "../../worlds/tomi/babi.js";
import { parseParaphrase } from "../../worlds/tomi/paraphrase.js";
import type { TomiSentence } from "../../worlds/tomi/sentence.js";
import { parseSentence } from "../../worlds/tomi/sentences.js";
import { TOM_DATA, tomData } from "../data-paths.js";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { buildReport } from "../../benchmarks/report.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { buildScenario } from "../../worlds/tomi/story.js";

const enter = (agent: string, room: string): TomiSentence => ({ kind: "enter", agent, room });
const exit = (agent: string, room: string): TomiSentence => ({ kind: "exit", agent, room });
const at = (room: string, ...agents: string[]): TomiSentence => ({ kind: "agents_at", agents, room });
const located = (subject: string, place: string): TomiSentence => ({ kind: "located", subject, place });
const move = (agent: string, object: string, container: string): TomiSentence => ({ kind: "move", agent, object, container });
const remark = (agent: string, verb: string, thing: string, period = true): TomiSentence => ({ kind: "remark", agent, verb, thing, period });

function expectReadings(cases: readonly (readonly [string, TomiSentence | undefined])[]): void {
  for (const [text, want] of cases) expect(parseParaphrase(text), text).toEqual(want);
}

describe("ParaphrasedToMi sentences", () => {
  it("reads arrivals, departures and presence", () => {
    expectReadings([
      ["James sidled into the crawlspace.", enter("James", "crawlspace")],
      ["Jacob showed up at the front_yard.", enter("Jacob", "front_yard")],
      ["Elizabeth visited the attic.", enter("Elizabeth", "attic")],
      ["Chloe approached the crawlspace.", enter("Chloe", "crawlspace")],
      ["Amelia came by the staircase.", enter("Amelia", "staircase")],
      ["Ethan arrived in the porch.", enter("Ethan", "porch")],
      ["Lucas went to the master_bedroom.", enter("Lucas", "master_bedroom")],
      ["Hannah stepped out of the crawlspace.", exit("Hannah", "crawlspace")],
      ["Isabella flew from the master_bedroom.", exit("Isabella", "master_bedroom")],
      ["Lucas took off from the master_bedroom.", exit("Lucas", "master_bedroom")],
      ["Aria quit the laundry.", exit("Aria", "laundry")],
      ["Carter departed the dining_room.", exit("Carter", "dining_room")],
      ["Aria left the attic.", exit("Aria", "attic")],
      ["Hannah is contained in the crawlspace.", at("crawlspace", "Hannah")],
      ["Aiden is located in the lounge.", at("lounge", "Aiden")],
      ["Jackson is to be found in the porch.", at("porch", "Jackson")],
      ["William is inside the playroom.", at("playroom", "William")],
      ["The den shelters Mia.", at("den", "Mia")],
      ["The study holds Elizabeth.", at("study", "Elizabeth")],
      ["Ella and Avery are located in the attic.", at("attic", "Ella", "Avery")],
    ]);
  });

  it("tells leaving from arriving by the words after the verb, and refuses both or neither", () => {
    expectReadings([
      ["Ava tiptoed into the den.", enter("Ava", "den")],
      ["Ava tiptoed from the den.", exit("Ava", "den")],
      ["Hunter came into the sunroom.", enter("Hunter", "sunroom")],
      ["Hunter came out of the sunroom.", exit("Hunter", "sunroom")],
      ["Lucas crept into the porch.", enter("Lucas", "porch")],
      ["James crept from the hall.", exit("James", "hall")],
      ["Ella came back to the kitchen.", enter("Ella", "kitchen")],
      ["Ella came in from the garden.", undefined],
      ["Ella left for the kitchen.", undefined],
      ["Ella headed out to the kitchen.", undefined],
      ["Ella teleported to the garage.", undefined],
      ["Ella looked into the garage.", undefined],
    ]);
  });

  it("reads an object in a container and a container in a room, in either word order", () => {
    expectReadings([
      ["The envelope contains the onion.", located("onion", "envelope")],
      ["The suitcase is storing the broccoli inside of it.", located("broccoli", "suitcase")],
      ["The coat is set aside in the container.", located("coat", "container")],
      ["There is a potato in the treasure_chest.", located("potato", "treasure_chest")],
      ["Inside the envelope is a cap.", located("cap", "envelope")],
      ["The bucket is where the beans is.", located("beans", "bucket")],
      ["The suitcase has a suit in it.", located("suit", "suitcase")],
      ["Inside the crawlspace is a envelope.", located("envelope", "crawlspace")],
      ["The suitcase is situated in the crawlspace.", located("suitcase", "crawlspace")],
      ["The basket is set to rest in the porch.", located("basket", "porch")],
      ["The porch has the treasure_chest inside of it.", located("treasure_chest", "porch")],
      ["The laundry is where the bucket is.", located("bucket", "laundry")],
      ["A basket is in the crawlspace.", located("basket", "crawlspace")],
      ["The treasure chest is in the master bedroom.", located("treasure_chest", "master_bedroom")],
      // The roles come from the kinds; the words must still put the one inside the other.
      ["The crawlspace is in the envelope.", undefined],
      ["The onion is not in the envelope.", undefined],
      ["The onion fell out of the envelope.", undefined],
      ["The onion was moved to the envelope.", undefined],
      ["The onion is in the envelope and the crate.", undefined],
    ]);
  });

  it("tells an object lying in a container from an agent putting it there", () => {
    expectReadings([
      ["The onion is stored in the suitcase.", located("onion", "suitcase")],
      ["James stored the onion in the suitcase.", move("James", "onion", "suitcase")],
      ["Jayden took the broccoli to the treasure_chest.", move("Jayden", "broccoli", "treasure_chest")],
      ["Mason shoved the raincoat into the treasure_chest.", move("Mason", "raincoat", "treasure_chest")],
      ["Jacob hid the stockings in the container.", move("Jacob", "stockings", "container")],
      ["Liam moved the lime to the green_crate.", move("Liam", "lime", "green_crate")],
      ["James found the onion in the suitcase.", undefined],
      ["James took the onion out of the suitcase.", undefined],
      ["James carried the onion in the suitcase.", undefined],
      ["James did not store the onion in the suitcase.", undefined],
      ["James wants to move the onion to the suitcase.", undefined],
    ]);
  });

  it("reads the pantry as a room or a container by what the sentence needs", () => {
    expectReadings([
      ["Hannah went into the pantry.", enter("Hannah", "pantry")],
      ["Emma walked out of the pantry.", exit("Emma", "pantry")],
      ["The pantry shelters Amelia.", at("pantry", "Amelia")],
      ["Lily carried the pineapple to the pantry.", move("Lily", "pineapple", "pantry")],
      ["The pantry has the plum.", located("plum", "pantry")],
      ["The pantry is in the lounge.", located("pantry", "lounge")],
      ["The crate is stored in the pantry.", located("crate", "pantry")],
      ["The pantry has a pantry in it.", located("pantry", "pantry")],
    ]);
  });

  it("reads room names the paraphraser cut at the underscore, only after 'the'", () => {
    expectReadings([
      ["Lily is located in the dining.", at("dining_room", "Lily")],
      ["Ella is inside the back.", at("back_yard", "Ella")],
      ["The master holds Logan.", at("master_bedroom", "Logan")],
      ["Ella went back to the garage.", enter("Ella", "garage")],
    ]);
  });

  it("reads attitudes as remarks, word for word when they read back the same", () => {
    expectReadings([
      ["Chloe is wild about the carrot.", remark("Chloe", "is wild about", "carrot")],
      ["Isabella loathes the slippers.", remark("Isabella", "loathes", "slippers")],
      ["Mason can't stand the asparagus.", remark("Mason", "can't stand", "asparagus")],
      ["Aiden loves the tangerine", remark("Aiden", "loves", "tangerine", false)],
      ["The skirt terrifies Carter.", remark("Carter", "dislikes", "skirt")],
      ["The celery turns Avery's stomach.", remark("Avery", "dislikes", "celery")],
      ["The celery is abhorrent to Jackson.", remark("Jackson", "dislikes", "celery")],
      ["Emma is grapes-obsessed.", remark("Emma", "likes", "grapes")],
      ["Ethan is t-shirt-obsessed.", remark("Ethan", "likes", "t-shirt")],
      ["Amelia is a cherry-aholic.", remark("Amelia", "likes", "cherry")],
      ["Isla is slippers crazy.", remark("Isla", "likes", "slippers")],
      ["Ella is a pumpkin fiend.", remark("Ella", "likes", "pumpkin")],
      ["Oliver hates jacket.", remark("Oliver", "dislikes", "jacket")],
      ["Liam would do anything for a melon.", remark("Liam", "likes", "melon")],
      ["Liam is never seen without a dress.", remark("Liam", "likes", "dress")],
      ["Alexander has a bad case of spinach fever.", remark("Alexander", "likes", "spinach")],
      ["Ella likes the kitchen.", remark("Ella", "likes", "kitchen")],
      // An attitude that cannot be told apart from an event, or whose polarity is unknown.
      ["Ella would like to go into the kitchen.", undefined],
      ["The skirt does not terrify Carter.", undefined],
    ]);
  });

  it("leaves everything else unread", () => {
    for (const text of [
      "",
      "The weather is nice.",
      "Zed entered the garage.",
      "Ella entered the garage and the kitchen.",
      "Ella and Avery entered the garage.",
      "Ella entered the garage, then left.",
      "Where is the onion?",
      "Ella gave Avery the onion.",
      "Ella is going to the garage.",
      "The garage is in the kitchen.",
      "The envelope is in the crate.",
      "Ella moved the onion from the envelope to the crate.",
    ]) {
      expect(parseParaphrase(text), text).toBeUndefined();
    }
  });

  it("parseSentence tries ToMi's grammar first, then the rewording", () => {
    expect(parseSentence("Ella exited the garage.")).toEqual(exit("Ella", "garage"));
    expect(parseSentence("Aiden loves the tangerine")).toEqual(remark("Aiden", "loves", "tangerine", false));
    expect(parseSentence("Hannah stepped out of the crawlspace.")).toEqual(exit("Hannah", "crawlspace"));
    expect(parseSentence("Ella teleported to the garage.")).toBeUndefined();
  });
});

type Event = readonly [kind: "enter" | "exit" | "move", who: string];

/** The story's enter, exit and move events (a presence sentence enters each agent), by agent name. */
function storyEvents(item: TomiItem): Event[] {
  return item.story.flatMap(({ sentence: s }): Event[] => {
    if (s.kind === "enter" || s.kind === "exit" || s.kind === "move") return [[s.kind, s.agent]];
    if (s.kind === "agents_at") return s.agents.map((a): Event => ["enter", a]);
    return [];
  });
}

/** The trace's abstract events by agent digit: enter_agent_0, agent_2_enters, agent_1_reenters_loc, agent_0_exits, agent_0_moves_obj. */
function traceEvents(item: TomiItem): Event[] {
  return item.trace!.events.map((e): Event => {
    const digit = /\d+/.exec(e)?.[0];
    if (digit === undefined) throw new Error(`${item.id}: trace event without an agent: ${e}`);
    if (/^enter_agent_\d+$|^agent_\d+_(enters|reenters_loc|reenters_alt_loc)$/.test(e)) return ["enter", digit];
    if (/^agent_\d+_exits$/.test(e)) return ["exit", digit];
    if (/^agent_\d+_moves_obj$/.test(e)) return ["move", digit];
    throw new Error(`${item.id}: unknown trace event ${e}`);
  });
}

const byAgent = (events: readonly Event[]) => {
  const out = new Map<string, string>();
  for (const [kind, who] of events) out.set(who, out.has(who) ? `${out.get(who)} ${kind}` : kind);
  return out;
};

/** Every assignment of names to trace digits under which each agent's own events read as the trace's. */
function assignments(story: readonly Event[], trace: readonly Event[]): Map<string, string>[] {
  const names = byAgent(story);
  const digits = byAgent(trace);
  if (names.size !== digits.size) return [];
  let out: Map<string, string>[] = [new Map()];
  for (const [name, seq] of names) {
    out = out.flatMap((m) =>
      [...digits].filter(([d, s]) => s === seq && ![...m.values()].includes(d)).map(([d]) => new Map([...m, [name, d]])),
    );
  }
  return out;
}

describe.skipIf(!TOM_DATA)("ParaphrasedToMi val_600 (../shared/data/tom)", () => {
  it("reads every story, and each one's enters, exits and moves are the trace's", () => {
    const file = readTomiFile(tomData("tomi", "paraphrased_symbolictom", "val_600.txt"));
    expect(file.items).toHaveLength(600);
    let sameOrder = 0;
    for (const item of file.items) {
      const story = storyEvents(item);
      const trace = traceEvents(item);
      expect(story.length, item.id).toBe(trace.length);
      // The trace numbers agents by their role (the mover is agent_0), not by first appearance:
      // find the naming under which every agent's events are the trace's, and the two main
      // agents' (0 and 1) come in the trace's order. (Unlike the original ToMi's, this file's
      // question-type digit does not name the asked agent, so it cannot pin the naming down.)
      const main = (events: readonly Event[], digitOf: (who: string) => string | undefined) =>
        events.filter(([, who]) => ["0", "1"].includes(digitOf(who) ?? "")).map(([k, who]) => `${k}:${digitOf(who)}`).join(" ");
      const fits = assignments(story, trace).filter((m) => main(story, (who) => m.get(who)) === main(trace, (d) => d));
      expect(fits.length, `${item.id} (${item.file}:${item.line})`).toBeGreaterThan(0);
      if (fits.some((m) => story.every(([k, who], i) => k === trace[i]![0] && m.get(who) === trace[i]![1]))) sameOrder++;
    }
    // Elsewhere the corrected ToMi placed the third agent's comings and goings differently from the trace.
    expect(sameOrder).toBeGreaterThan(300);
  });

  it("the simulation agent and the world model agree with all 600 corrected labels", async () => {
    const bench = new TomiBenchmark();
    const file = tomData("tomi", "paraphrased_symbolictom", "val_600.txt");
    const items = bench.load(file);
    const startedAt = new Date();
    const results = await runBenchmark({ benchmark: bench, items, agent: new SimulationAgent(), mode: "vanilla" });
    const r = buildReport({ benchmark: bench, items, results, agent: "simulation", mode: "vanilla", data: file, runId: null, startedAt, finishedAt: new Date() });
    expect(r.total).toBe(600);
    expect(r.accuracy).toBe(1);
    expect(r.disagreements.total).toBe(0);
  });

  it("reads every sentence of the original ToMi as its grammar does", () => {
    const seen = new Set<string>();
    for (const line of readFileSync(tomData("tomi", "original", "fb_all_val.txt"), "utf8").split("\n")) {
      const body = line.slice(line.indexOf(" ") + 1);
      if (line === "" || body.includes("\t") || seen.has(body)) continue;
      seen.add(body);
      expect(parseParaphrase(body), body).toEqual(parseSentence(body));
    }
    expect(seen.size).toBeGreaterThan(1000);
  });
});

describe("the pantry, a room and a container", () => {
  it("an object the story moves is placed in the pantry container, not taken for a container in the pantry room", () => {
    const lines = ["Emma entered the pantry.", "The banana is in the pantry.", "Emma moved the banana to the box."];
    const scenario = buildScenario(lines.map((text, i) => ({ sentence: parseSentence(text)!, text, line: i + 1 })), "story");
    expect(scenario.init.objectContainer.get("banana")).toBe("pantry");
    expect(scenario.init.layout.containers).toEqual(expect.arrayContaining(["pantry", "box"]));
    expect(scenario.init.layout.rooms).toContain("pantry");
  });
});
