import { describe, expect, it } from "vitest";
import { z } from "zod";
import { playScript } from "../../worlds/core/script.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { LazyRng, TimestepContext } from "../../worlds/core/step-context.js";
import { DEFAULT_HIERARCHY, RESPONSE_ONLY_HIERARCHY } from "../../worlds/usersim/hierarchy.js";
import { judgeReply } from "../../worlds/usersim/judge.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { parseConversationsJsonl } from "../../worlds/usersim/records.js";
import { referenceOf, stateOfRecord, usersimScenario } from "../../worlds/usersim/scenario.js";
import { simulationReply } from "../../worlds/usersim/baselines.js";
import { initialUsersimState, UsersimWorld, type UsersimAction, type UsersimState } from "../../worlds/usersim/world.js";

const world = new UsersimWorld();
const ctx = () => new TimestepContext<never>(new LazyRng(0), []);
const step = (s: UsersimState, acts: Record<string, UsersimAction>) => world.step(s, new Map(Object.entries(acts)), ctx());

const record = parseConversationsJsonl(generateUsersim(12, 3).jsonl, "g.jsonl").find((r) => r.thread.length >= 2 && r.history.length > 0)!;
const truth = simulationReply(record.latent!, DEFAULT_HIERARCHY);
const reply = (r = truth): UsersimAction => ({ type: "reply", ...r });

describe("the user-simulation world", () => {
  it("shows the user its profile, history and the conversation, and the others the conversation only", () => {
    const s = stateOfRecord(record);
    const others = s.participants;
    expect(world.agents(s)).toEqual([...others, s.user]);
    const mine = world.observe(s, s.user).text;
    expect(mine).toContain(`You are ${s.user}`);
    expect(mine).toContain(s.profile);
    expect(mine).toContain(record.history[0]!.text);
    for (const m of record.thread) expect(mine).toContain(m.text);
    for (const o of others) {
      const theirs = world.observe(s, o).text;
      for (const m of record.thread) expect(theirs).toContain(m.text);
      expect(theirs).not.toContain(s.profile.split("\n")[1]!);
      expect(theirs).not.toContain(record.history[0]!.text);
    }
    // Nobody observes the ground truth (the profile may list the user's opinions, not its emotions).
    for (const a of world.agents(s)) {
      const text = world.observe(s, a).text;
      expect(text).not.toContain(record.reply);
      expect(text).not.toContain(record.states.emotion!);
      expect(JSON.stringify(world.observe(s, a).data ?? null)).not.toContain(record.reply);
    }
    expect(world.observe(s, "a stranger")).toEqual({ text: "" });
  });

  it("adds the response to the conversation, keeps the states in the user's mind, and scores the reply once", () => {
    const s0 = stateOfRecord(record);
    const half = { ...truth, states: { ...truth.states, goal: "ask others about hot desking" } };
    const r = step(s0, { [s0.user]: reply(half) });
    expect(r.rewards).toEqual({ [s0.user]: judgeReply(half, referenceOf(record), DEFAULT_HIERARCHY).reward });
    expect(r.rewards![s0.user]).toBeLessThan(1);
    const s1 = r.state;
    expect(s1.thread.at(-1)).toEqual({ author: s0.user, text: truth.response });
    expect(s1.reference).toBeUndefined();
    expect(world.isTerminal(s1)).toBe(true);
    // The states: in the user's mental state, in no event, no observation of another, no action line.
    expect(world.mentalState(s1, s0.user)).toContain(`Stance: ${truth.states.stance}.`);
    expect(world.mentalState(s0, s0.user)).toBeUndefined();
    for (const o of s0.participants) {
      expect(world.mentalState(s1, o)).toBeUndefined();
      expect(world.observe(s1, o).text).toContain(truth.response);
      expect(world.observe(s1, o).text).not.toContain(truth.states.stance!);
    }
    expect(JSON.stringify(r.events)).not.toContain(truth.states.stance!);
    expect(world.renderAction(s0, s0.user, reply())).toBe(`replies: "${truth.response}"`);
    // A state with a reference of its own scores a perfect reply 1; the next reply has nothing to be scored against.
    expect(step(stateOfRecord(record), { [s0.user]: reply() }).rewards).toEqual({ [s0.user]: 1 });
    const live = stateOfRecord(record, DEFAULT_HIERARCHY, { live: true });
    const again = step(step(live, { [s0.user]: reply() }).state, { [s0.user]: reply() });
    expect(again.rewards).toBeUndefined();
    expect(again.state.replies).toBe(2);
    expect(world.isTerminal(again.state)).toBe(false);
  });

  it("puts the states only in the user's <mental_state> of the socialized context", () => {
    const s0 = stateOfRecord(record);
    const episode = playScript(world, s0, [{ actor: s0.user, action: reply() }]);
    expect(episode.returns[s0.user]).toBe(1);
    const context = toSocializedContext(episode);
    const last = context.socialized_context.at(-1)!;
    const userLine = last.observations.find((l) => l.startsWith(`${s0.user}: `))!;
    expect(userLine).toContain(`<mental_state>Stance: ${truth.states.stance}.`);
    expect(userLine).toContain(`Emotion: ${truth.states.emotion}.`);
    // The emotion appears once: in that mental state; the stance in no line of the others.
    expect(JSON.stringify(context).split(truth.states.emotion!).length - 1).toBe(1);
    for (const step of context.socialized_context) {
      for (const line of [step.state, ...step.actions, ...step.observations.filter((l) => !l.startsWith(`${s0.user}: `))]) expect(line).not.toContain(truth.states.stance!);
    }
  });

  it("lets only the user reply, only the others write, and checks the reply's states against the hierarchy", () => {
    const s = stateOfRecord(record);
    const other = s.participants[0]!;
    expect(world.check(s, other, reply())).toBe(`only ${s.user} replies with states; ${other} writes messages`);
    expect(world.check(s, s.user, { type: "say", text: "hi" })).toBe(`${s.user} replies with its states (a reply), not a message`);
    expect(world.check(s, s.user, { type: "reply", states: { stance: "x" }, response: "y" })).toBe("the reply's states are stance, expected stance, emotion, belief, value, goal, communication");
    expect(world.check(s, other, { type: "say", text: "Nice." })).toBeUndefined();
    const userSchema = world.actionSchema(s, s.user);
    expect(userSchema.safeParse(reply()).success).toBe(true);
    expect(userSchema.safeParse({ type: "say", text: "hi" }).success).toBe(false);
    expect(userSchema.safeParse({ type: "reply", states: { ...truth.states, stance: "a\nb" }, response: "ok" }).success).toBe(false);
    expect(world.actionSchema(s, other).safeParse({ type: "say", text: "Nice." }).success).toBe(true);
    expect(world.actionSchema(s, other).safeParse(reply()).success).toBe(false);
    expect(world.actionSchema(s, "a stranger").safeParse({ type: "say", text: "hi" }).success).toBe(false);
    // The JSON Schema a constrained decoder compiles: the reply's tags in order, with their patterns.
    const json = JSON.stringify(z.toJSONSchema(userSchema));
    const order = DEFAULT_HIERARCHY.states.map((d) => json.indexOf(`"${d.name}":{`));
    expect(order.every((i) => i > 0) && [...order].sort((a, b) => a - b).join() === order.join()).toBe(true);
    expect(json).toContain('"pattern"');
    // An action check refuses is not applied, even from a trusted agent.
    const r = step(s, { [other]: reply() });
    expect(r.state.thread).toEqual(s.thread);
    const over = step(s, { [s.user]: reply() }).state;
    expect(world.check(over, s.user, reply())).toBe("the conversation is over");
  });

  it("plays a live conversation: a person writes, the user replies, in the response-only recipe too", () => {
    const s0 = initialUsersimState({ user: "maple_fern", participants: ["you"], hierarchy: RESPONSE_ONLY_HIERARCHY, profile: "A nurse who works nights." });
    expect(world.observe(s0, "you").text).toBe("The conversation:\n(nobody has written anything yet)");
    const s1 = step(s0, { you: { type: "say", text: "How was your shift?" } }).state;
    expect(world.describe(s1)).toBe('you wrote: "How was your shift?"');
    const s2 = step(s1, { maple_fern: { type: "reply", states: {}, response: "Long. Quiet, though." } }).state;
    expect(world.observe(s2, "you").text).toBe("The conversation:\nyou (you) wrote:\nHow was your shift?\n\nmaple_fern wrote:\nLong. Quiet, though.");
    expect(world.mentalState(s2, "maple_fern")).toBeUndefined();
    expect(() => initialUsersimState({ user: "a:b" })).toThrow('the name "a:b" has a colon or a line break');
    expect(() => initialUsersimState({ user: "x", participants: ["x"] })).toThrow("two seats share a name: x, x");
  });

  it("makes seats of any ids from data, and a room's scenario from a seed", () => {
    const odd = parseConversationsJsonl(JSON.stringify({ user_id: "u:42", prompt: [{ role: "op:1", content: "Post" }, { role: "u:42", content: "Earlier" }], completion: "Reply" }), "o.jsonl")[0]!;
    const s = stateOfRecord(odd);
    expect(world.agents(s)).toEqual(["op_1", "u_42"]);
    expect(world.observe(s, "u_42").text).toContain("u_42 (you) wrote:\nEarlier");
    const a = usersimScenario(4);
    expect(usersimScenario(4)).toEqual(a);
    expect(a.initialState.maxReplies).toBe(4);
    expect(step(a.initialState, { [a.initialState.user]: reply(a.truth) }).rewards).toEqual({ [a.initialState.user]: 1 });
  });
});
