/**
 * What characters say around the facts in generated FANToM conversations: greetings, topic
 * openers, small talk, reactions, leaving and coming back. Our own lines, written to read like a
 * casual get-together (FANToM's conversations are between people who have just met or catch up).
 * None of them names a fact value (facts.ts), and only the leaving and returning lines carry the
 * cues the reader infers presence from (conversation.ts).
 */

export const CHARACTER_NAMES = [
  "Linda", "David", "Kailey", "Jamal", "Riley", "Cara", "Tabitha", "Gina", "Marcus", "Priya",
  "Omar", "Sofia", "Hiroshi", "Nadia", "Ethan", "Zoe", "Mateo", "Maya", "Andre", "Bianca",
  "Carlos", "Dana", "Elise", "Felix", "Grace", "Hana", "Ivan", "Jasmine", "Kofi", "Lena",
  "Nora", "Oscar", "Paige", "Quinn", "Rosa", "Tariq", "Uma", "Vera", "Wesley", "Yara",
] as const;

export const OPENING_LINES = [
  "It is so good to finally sit down and catch up with everyone.",
  "I know, it has been way too long since we all got together.",
  "How has everyone been? It feels like forever.",
  "Pretty good, just busy as always. Work has been a lot lately.",
  "Same here. I am just happy to have a free evening for once.",
  "This coffee place was a great pick, by the way.",
  "Thanks for organizing this, it is really nice to see you all.",
  "Honestly, I needed a break from my inbox today.",
] as const;

/** Someone turns the conversation to a topic. */
export const TOPIC_OPENERS: Readonly<Record<string, readonly string[]>> = {
  pets: ["So, does anyone here have pets these days?", "I keep seeing cute animal videos online. Does anyone have a pet?"],
  travel: ["Has anyone traveled anywhere fun recently?", "I really need a vacation. Where has everyone been lately?"],
  work: ["How is work going for everyone?", "Any big changes at work for anyone lately?"],
  food: ["Has anyone cooked anything good lately?", "I am always looking for new recipes. What has everyone been cooking?"],
  music: ["Is anyone into music these days?", "I have been thinking about learning an instrument. Does anyone play?"],
  hobbies: ["Has anyone picked up a new hobby lately?", "What does everyone do on weekends these days?"],
  books: ["Is anyone reading anything good right now?", "I need a new book. Any recommendations?"],
  home: ["Any big life changes coming up for anyone?", "Is anyone planning a move soon? Rent keeps going up."],
  gardening: ["Does anyone here do any gardening?", "The weather has been perfect for gardening lately, has anyone noticed?"],
};

/** Small talk on a topic: nothing anyone could be asked about later. */
export const TOPIC_SMALL_TALK: Readonly<Record<string, readonly string[]>> = {
  pets: ["Pets really do make a house feel like a home.", "I have always wanted one, but my apartment is tiny.", "Vet bills are no joke, though."],
  travel: ["Airports are exhausting, but the trips are always worth it.", "I love trying the local food wherever I go.", "I still have not unpacked from my last trip, honestly."],
  work: ["Starting something new is scary but exciting.", "I think everyone needs a change every few years.", "My commute is the worst part of my job."],
  food: ["Cooking for a crowd is so stressful.", "Leftovers are the best part of a big dinner.", "I burn everything I try to cook, so I am impressed."],
  music: ["Learning an instrument as an adult takes real patience.", "I played piano as a kid, but I forgot all of it.", "Practicing every day is the hard part."],
  hobbies: ["It is so important to have something just for fun.", "I keep buying gear for hobbies I never stick with.", "Weekends go by way too fast."],
  books: ["I never have time to read anymore.", "Audiobooks have saved my commute.", "I love a book that keeps you guessing."],
  home: ["Moving is one of the most stressful things ever.", "Packing always takes twice as long as I expect.", "A fresh start can be really good, though."],
  gardening: ["Gardening is so relaxing after a long day.", "The squirrels always get to my garden first.", "Homegrown food just tastes better."],
};

/** Said right after someone shares a fact ({owner}: who shared it). */
export const REACTIONS = [
  "Oh wow, {owner}, that sounds wonderful!",
  "That is so cool, {owner}. I had no idea.",
  "No way! Tell us more, {owner}.",
  "I love that, {owner}. Good for you.",
  "That is amazing, {owner}! I am a little jealous.",
] as const;

/** Filler while someone is away: general chat that conveys no fact. */
export const FILLER = [
  "This is such a nice evening.",
  "I should really get out more often like this.",
  "We should make this a monthly thing.",
  "Did anyone try the lemon cake here? It is incredible.",
  "It is funny how time flies when we get together.",
] as const;

/** The speaker leaves for a while. Each carries a leaving cue. */
export const LEAVE_LINES = [
  "Sorry, I need to take this call. Be right back!",
  "Excuse me for a moment, I need to grab my charger from the car.",
  "I have to step out for a few minutes, my delivery just arrived.",
  "Hold that thought, I need to refill my drink. I will be back in a minute.",
  "Sorry, I have to step away for a bit to answer a work email.",
] as const;

/** Someone sees the leaver off ({name}: the leaver). */
export const SEND_OFFS = ["No problem, {name}, take your time.", "Sure thing, {name}!", "Go ahead, {name}, we will be here.", "Okay, {name}, see you in a bit."] as const;

/** The speaker comes back. Each carries a returning cue. */
export const RETURN_LINES = [
  "I'm back! Sorry about that. What did I miss?",
  "Okay, I'm back. What were you all talking about?",
  "Sorry about that, I'm back now. Did I miss anything?",
  "I'm back, finally. What did I miss?",
] as const;

/** An answer to "what did I miss" that tells nothing ({name}: the one who came back; {topic}). */
export const NOTHING_MISSED = [
  "Oh, not much, {name}. We were just chatting about {topic}.",
  "Nothing important, {name}, welcome back!",
  "Just the usual, {name}. Glad you made it back.",
] as const;

/** A retelling for the one who came back ({name}; {statement}: the fact, as a sentence without period). */
export const RECAPS = ["Welcome back, {name}! We were just hearing that {statement}.", "{name}, you missed some news: {statement}!"] as const;

/** The speaker leaves for good. Each carries a leaving cue. */
export const GOODBYE_LINES = [
  "I should get going, it is getting late. It was lovely talking to you all!",
  "I have to head home now, I have an early morning tomorrow. Bye, everyone!",
] as const;

/** Topic names as the "nothing missed" line says them. */
export const TOPIC_NAMES: Readonly<Record<string, string>> = {
  pets: "pets",
  travel: "travel",
  work: "work",
  food: "food",
  music: "music",
  hobbies: "weekend plans",
  books: "books",
  home: "moving",
  gardening: "gardens",
};
