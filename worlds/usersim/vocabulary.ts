/**
 * What generated users talk about and are made of: the topics of four platforms (each with two
 * named targets a stance can be about), and the closed lists every latent state is drawn from.
 * The lists are closed so that a state written in their words is read back exactly (latent.ts)
 * and judged exactly; anything else is judged as free text.
 */

export type Platform = "forum" | "reviews" | "chat" | "email";
export const PLATFORMS: readonly Platform[] = ["forum", "reviews", "chat", "email"];

export interface Topic {
  readonly id: string;
  readonly platform: Platform;
  /** What a user interested in it lists among its interests. */
  readonly interest: string;
  readonly title: string;
  /** The post's opening, before its claim about the first target. */
  readonly intro: string;
  /** The poster's claim when for (+) or against (-) the first target. */
  readonly pro: string;
  readonly con: string;
  /** The targets a stance can be about; the post is about the first. */
  readonly targets: readonly [string, string];
  /** In the chat platform, what the user asked for first. */
  readonly request?: string;
  /** Beliefs and values (indexes into BELIEFS and VALUES) this topic brings up. */
  readonly beliefs: readonly number[];
  readonly values: readonly number[];
}

export const TOPICS: readonly Topic[] = [
  {
    id: "four-day-week",
    platform: "forum",
    interest: "work-life balance",
    title: "My company is trialling a four-day work week",
    intro: "Starting next month we work Monday to Thursday, same pay, for six months.",
    pro: "Honestly I think a four-day work week should be the norm everywhere.",
    con: "I think a four-day work week is going to backfire on all of us.",
    targets: ["a four-day work week", "return-to-office mandates"],
    beliefs: [0, 2, 4, 8],
    values: [2, 8, 1],
  },
  {
    id: "bike-lanes",
    platform: "forum",
    interest: "urban cycling",
    title: "The city wants to replace street parking with protected bike lanes",
    intro: "The council votes next week on turning the parking along Main Street into a two-way bike lane.",
    pro: "Protected bike lanes are long overdue and I hope it passes.",
    con: "Protected bike lanes will kill the small shops on that street.",
    targets: ["protected bike lanes", "congestion pricing"],
    beliefs: [0, 7, 10, 6],
    values: [5, 11, 0],
  },
  {
    id: "school-phones",
    platform: "forum",
    interest: "parenting and schools",
    title: "Our school district is banning phones during class",
    intro: "From September, phones go in a locked pouch from first bell to last.",
    pro: "Phone bans in schools are the best thing to happen to our kids in years.",
    con: "Phone bans in schools treat teenagers like they cannot be trusted.",
    targets: ["phone bans in schools", "screen time limits for teenagers"],
    beliefs: [3, 4, 7, 5],
    values: [10, 0, 7],
  },
  {
    id: "salt-road",
    platform: "reviews",
    interest: "mystery novels",
    title: "The Salt Road (paperback), a slow-burn coastal mystery",
    intro: "A detective returns to her hometown to reopen the case that ended her career.",
    pro: "Readers call the novel's twist ending one of the best in years.",
    con: "Readers are split on the novel's twist ending.",
    targets: ["the novel's twist ending", "the slow first half"],
    beliefs: [11, 6, 10],
    values: [6, 4, 9],
  },
  {
    id: "aerion-headphones",
    platform: "reviews",
    interest: "audio gear",
    title: "Aerion Q5 wireless noise-cancelling headphones",
    intro: "Forty hours of battery, multipoint pairing and a companion app.",
    pro: "The headphones' noise cancelling is rated best in class by reviewers.",
    con: "The headphones' noise cancelling has had mixed reviews.",
    targets: ["the headphones' noise cancelling", "the subscription-only app"],
    beliefs: [3, 9, 11],
    values: [3, 9, 6],
  },
  {
    id: "weeknight-greens",
    platform: "reviews",
    interest: "vegetarian cooking",
    title: "Weeknight Greens: 120 vegetarian dinners in thirty minutes",
    intro: "A cookbook for busy households who want more vegetables on the table.",
    pro: "The cookbook's thirty-minute recipes are its whole promise, and it keeps it.",
    con: "The cookbook's thirty-minute recipes are its promise, but reviewers disagree on whether it keeps it.",
    targets: ["the cookbook's thirty-minute recipes", "hard-to-find ingredients"],
    beliefs: [5, 11, 8],
    values: [8, 9, 2],
  },
  {
    id: "lisbon-trip",
    platform: "chat",
    interest: "travel planning",
    title: "Planning a five-day trip to Lisbon",
    request: "Can you plan five days in Lisbon for me? I like food and walking, and I am on a budget.",
    intro: "Here is a plan: day one Alfama and the castle, day two Belem, day three Sintra, day four Cascais, day five markets and a fado night.",
    pro: "It is a packed itinerary, but you will see everything that matters.",
    con: "I kept the packed itinerary to the mornings so you have room to wander.",
    targets: ["the packed itinerary", "budget hostels"],
    beliefs: [5, 10, 11],
    values: [0, 3, 8],
  },
  {
    id: "exam-plan",
    platform: "chat",
    interest: "exam preparation",
    title: "A study plan for the bar exam",
    request: "I have ten weeks until the bar exam and I work part time. How should I study?",
    intro: "Here is a schedule: four hours every day, one subject per week, practice essays on weekends.",
    pro: "Sticking to the suggested daily study schedule is the surest way to pass.",
    con: "The suggested daily study schedule is only a starting point; adjust it freely.",
    targets: ["the suggested daily study schedule", "flashcard apps"],
    beliefs: [2, 5, 0],
    values: [8, 2, 9],
  },
  {
    id: "resume-rewrite",
    platform: "chat",
    interest: "job hunting",
    title: "Rewriting a resume for a career change",
    request: "Please rewrite my resume so it works for project management jobs.",
    intro: "I rewrote it: a new three-line summary up top, and only your last three jobs.",
    pro: "The rewritten resume summary is the part recruiters will actually read.",
    con: "The rewritten resume summary is optional; many recruiters skip it.",
    targets: ["the rewritten resume summary", "listing every past job"],
    beliefs: [11, 2, 1],
    values: [4, 9, 6],
  },
  {
    id: "launch-date",
    platform: "email",
    interest: "product launches",
    title: "Re: moving the launch date",
    intro: "Following up on yesterday's meeting about the billing release.",
    pro: "I propose moving the launch to March so we can finish testing properly.",
    con: "I do not think moving the launch to March is an option; sales has already announced it.",
    targets: ["moving the launch to March", "weekend overtime"],
    beliefs: [9, 10, 2],
    values: [5, 2, 4],
  },
  {
    id: "expense-policy",
    platform: "email",
    interest: "office policy",
    title: "New expense policy from finance",
    intro: "Finance has sent the new policy; it starts on the first of the month.",
    pro: "I think the new expense approval process will save us a lot of trouble.",
    con: "I am worried the new expense approval process will slow everything down.",
    targets: ["the new expense approval process", "company credit cards"],
    beliefs: [1, 7, 9],
    values: [1, 4, 7],
  },
  {
    id: "office-move",
    platform: "email",
    interest: "workplace design",
    title: "Floor plans for the office move",
    intro: "Attached are the plans for the new building; we move in April.",
    pro: "The move to an open-plan office should help the teams talk more.",
    con: "I have doubts about the move to an open-plan office.",
    targets: ["the move to an open-plan office", "hot desking"],
    beliefs: [4, 1, 6],
    values: [7, 8, 1],
  },
];

/** Stance positions -2..2, as a stance text writes them. */
export const POSITION_PHRASES: Readonly<Record<number, string>> = {
  [-2]: "strongly disagrees with",
  [-1]: "somewhat disagrees with",
  0: "is neutral on",
  1: "somewhat agrees with",
  2: "strongly agrees with",
};

export type Family = "positive" | "negative" | "uncertain";

/** Emotion -> its family (the judge gives half credit within a family) and the word a reply uses. */
export const EMOTIONS: Readonly<Record<string, { readonly family: Family; readonly adjective: string }>> = {
  enthusiasm: { family: "positive", adjective: "excited" },
  gratitude: { family: "positive", adjective: "grateful" },
  hope: { family: "positive", adjective: "hopeful" },
  relief: { family: "positive", adjective: "relieved" },
  amusement: { family: "positive", adjective: "amused" },
  pride: { family: "positive", adjective: "proud" },
  irritation: { family: "negative", adjective: "irritated" },
  frustration: { family: "negative", adjective: "frustrated" },
  anger: { family: "negative", adjective: "angry" },
  disappointment: { family: "negative", adjective: "disappointed" },
  worry: { family: "negative", adjective: "worried" },
  sadness: { family: "negative", adjective: "sad" },
  curiosity: { family: "uncertain", adjective: "curious" },
  skepticism: { family: "uncertain", adjective: "skeptical" },
  confusion: { family: "uncertain", adjective: "confused" },
};

export const EMOTIONS_BY_FAMILY: Readonly<Record<Family, readonly string[]>> = {
  positive: Object.keys(EMOTIONS).filter((e) => EMOTIONS[e]!.family === "positive"),
  negative: Object.keys(EMOTIONS).filter((e) => EMOTIONS[e]!.family === "negative"),
  uncertain: Object.keys(EMOTIONS).filter((e) => EMOTIONS[e]!.family === "uncertain"),
};

/** Intensity 1..3 as an emotion text writes it, and as a reply says it. */
export const INTENSITIES: readonly string[] = ["", "mild", "moderate", "strong"];
export const INTENSITY_ADVERBS: readonly string[] = ["", "a little", "pretty", "really"];

export const BELIEFS: readonly string[] = [
  "people rarely change their habits unless they are forced to",
  "most institutions care more about appearances than results",
  "hard work is noticed and rewarded in the long run",
  "new technology usually creates as many problems as it solves",
  "people do their best work when they are trusted",
  "small daily choices add up to big outcomes",
  "experts often miss what ordinary people see first",
  "rules only work when everyone follows them",
  "most people mean well but are stretched too thin",
  "companies cut corners whenever nobody is watching",
  "change is uncomfortable but usually worth it",
  "first impressions tell you most of what you need to know",
];

export const VALUES: readonly string[] = [
  "personal freedom matters more than convenience",
  "fairness matters more than efficiency",
  "time with family comes before work",
  "money should go to things that last",
  "honesty matters even when it is uncomfortable",
  "safety should come before speed",
  "good craftsmanship deserves to be paid for",
  "everyone deserves a say before a decision",
  "health comes before productivity",
  "simple things beat endless features",
  "children's wellbeing should come first",
  "the environment must be protected for future generations",
];

export type GoalKind = "persuade" | "support" | "ask" | "vent" | "mock" | "share" | "inform" | "praise";

/** How a goal text writes each kind ({t}: its target). */
export const GOAL_TEMPLATES: Readonly<Record<GoalKind, string>> = {
  persuade: "persuade others about {t}",
  support: "offer support to {t}",
  ask: "ask others about {t}",
  vent: "vent about {t}",
  mock: "make fun of {t}",
  share: "share a personal experience with {t}",
  inform: "inform others about {t}",
  praise: "praise {t}",
};
export const GOAL_KINDS = Object.keys(GOAL_TEMPLATES) as GoalKind[];

/** Who a supporting reply is for. */
export const THE_POSTER = "the poster";

export const TONES: readonly string[] = ["friendly", "blunt", "analytical", "casual", "formal", "sarcastic"];

export const STRUCTURES: readonly string[] = [
  "tells a personal story then draws a lesson",
  "gives reasons step by step",
  "states a conclusion with little explanation",
  "asks questions to test the claim",
  "weighs both sides before concluding",
];

export const HANDLE_FIRST: readonly string[] = ["maple", "quiet", "river", "amber", "copper", "north", "silver", "velvet", "cedar", "misty", "rusty", "lucky", "sunny", "brisk", "stormy", "hazel"];
export const HANDLE_SECOND: readonly string[] = ["fern", "lake", "oak", "finch", "harbor", "meadow", "stone", "otter", "ridge", "willow", "sparrow", "pine"];
/** Colleagues in e-mail threads. */
export const FIRST_NAMES: readonly string[] = ["Dana", "Priya", "Marcus", "Elena", "Tomas", "Aisha", "Jonah", "Mei", "Rafael", "Sofia", "Grant", "Noor"];

export const AGE_GROUPS: readonly string[] = ["18-24", "25-34", "35-44", "45-54", "55-64", "65+"];
export const OCCUPATIONS: readonly string[] = ["nurse", "teacher", "software developer", "electrician", "accountant", "graduate student", "retail manager", "chef", "librarian", "paramedic", "graphic designer", "farmer"];
export const LOCATIONS: readonly string[] = ["Ohio, USA", "Manchester, UK", "Toronto, Canada", "Melbourne, Australia", "Dublin, Ireland", "Texas, USA", "Auckland, New Zealand", "Cape Town, South Africa"];
export const HOBBIES: readonly string[] = ["gardening", "board games", "trail running", "photography", "baking", "chess", "birdwatching", "woodworking"];

/** Other people's short replies in a thread, by their position on the post's target. */
export const COMMENTS: Readonly<Record<"for" | "against" | "unsure", readonly string[]>> = {
  for: ["Totally agree, {t} is overdue.", "We tried {t} and it went well.", "Honestly {t} sounds great to me."],
  against: ["Not convinced {t} is a good idea.", "Wait until you actually try {t}.", "I have seen {t} go badly before."],
  unsure: ["Curious how {t} plays out.", "Does anyone have numbers on {t}?"],
};
