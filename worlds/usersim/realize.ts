/**
 * A generated user's reply, written from its latent states: every sentence comes from one state
 * (stance, emotion, belief, value, goal), the communication style orders them and sets the tone,
 * and the latent's seed picks among each template's wordings. A pure function of the latent, so
 * the generator's reply and the simulation agent's are the same text.
 *
 * Not every state is always said: a blunt conclusion leaves the belief and the value unspoken,
 * as people leave theirs; they stay in the ground truth, for a model to infer from the profile.
 */
import { Rng } from "../core/rng.js";
import { normalizeTarget, type Emotion, type Goal, type Latent, type Stance } from "./latent.js";
import { EMOTIONS, INTENSITY_ADVERBS, STRUCTURES } from "./vocabulary.js";

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

const STANCE: Readonly<Record<number, readonly string[]>> = {
  [-2]: ["I am completely against {t}.", "I am firmly opposed to {t}."],
  [-1]: ["I am not convinced by {t}.", "I have my doubts about {t}."],
  0: ["I honestly have no strong opinion on {t} yet.", "I am undecided about {t}."],
  1: ["I am mostly on board with {t}.", "I can get behind {t}, mostly."],
  2: ["I am completely in favor of {t}.", "I am all for {t}."],
};

const GOAL: Readonly<Record<Exclude<Goal["kind"], "persuade">, readonly string[]>> = {
  support: ["Hang in there, you are not alone in this.", "Sending you strength, this is a lot to deal with."],
  ask: ["Has anyone here actually had experience with {t}?", "What do people here make of {t}?"],
  vent: ["I am just tired of hearing about {t}.", "Sorry, I needed to get this off my chest about {t}."],
  mock: ["Sure, what could possibly go wrong with {t}.", "Oh yes, {t}, what a brilliant idea."],
  share: ["Here is what happened when I dealt with {t}.", "I went through {t} myself, so here is my experience."],
  inform: ["For context, there is a longer history to {t} than most people think.", "Worth knowing: {t} has been tried elsewhere."],
  praise: ["Credit where it is due: {t} is really well done.", "I have to praise {t}."],
};

/** Persuading, for or against: the way the user's stance on the goal's target goes. */
const PERSUADE_FOR = ["I would ask everyone here to give {t} a real chance.", "Please give {t} a fair hearing before you dismiss it."];
const PERSUADE_AGAINST = ["I would ask everyone here to reconsider {t}.", "Please think twice about {t}."];

const OPENERS: Readonly<Record<string, readonly string[]>> = {
  friendly: ["Thanks for sharing this!", "Great post!"],
  analytical: ["Let me break this down."],
  formal: ["I would like to offer a perspective."],
  sarcastic: ["Oh, wonderful."],
  blunt: [],
  casual: ["ok so"],
};

export function realizeReply(latent: Latent): string {
  const rng = Rng.seeded(`usersim:reply:${latent.seed}`);
  const say = (templates: readonly string[], t = "") => rng.pick(templates).replace("{t}", t).replace("{T}", cap(t));
  const stance = (s: Stance) => say(STANCE[s.position]!, s.target);
  const emotion = (e: Emotion) => {
    const feel = `${INTENSITY_ADVERBS[e.intensity]} ${EMOTIONS[e.emotion]!.adjective}`;
    return say([`I am ${feel} about {t}.`, `When it comes to {t}, I am ${feel}.`], e.target);
  };
  const b = latent.belief;
  const v = latent.value;
  const g = latent.goal;
  const towards = latent.stances.find((s) => normalizeTarget(s.target) === normalizeTarget(g.target))?.position ?? 0;
  const goal = say(g.kind === "persuade" ? (towards > 0 ? PERSUADE_FOR : PERSUADE_AGAINST) : GOAL[g.kind], g.target);
  const stances = latent.stances.map(stance);
  const emotions = latent.emotions.map(emotion);
  const value = say([`For me, ${v}.`, `At the end of the day, ${v}.`]);
  const main = latent.stances[0]!.target;
  let body: string[];
  switch (STRUCTURES.indexOf(latent.communication.structure)) {
    case 0: // a personal story, then the lesson
      body = [say(["Something like this happened to me last year.", "I went through almost the same thing a while ago."]), ...stances, ...emotions, say([`That taught me that ${b}.`, `It showed me that ${b}.`]), value, goal];
      break;
    case 1: // reasons, step by step
      body = [stances[0]!, `First, ${b}.`, `Second, ${v}.`, ...stances.slice(1), ...emotions, goal];
      break;
    case 2: // the conclusion alone
      body = [...stances, ...emotions, goal];
      break;
    case 3: // questions
      body = [say(["Has anyone really thought this through?", "Are we sure about this?"]), ...stances, `Isn't it true that ${b}?`, value, ...emotions, goal];
      break;
    default: // both sides, then a conclusion
      body = [say([`I can see why some people like ${main}.`, `There are fair points on both sides of ${main}.`]), ...stances, say([`The way I see it, ${b}.`, `In my experience, ${b}.`]), value, ...emotions, goal];
  }
  const openers = OPENERS[latent.communication.tone] ?? [];
  const text = [...(openers.length ? [rng.pick(openers)] : []), ...body].join(" ");
  return latent.communication.tone === "casual" ? text.toLowerCase() : text;
}
