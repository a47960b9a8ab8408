/**
 * What the synthetic microblog talks about and how its users write: topics that people take sides
 * on (each with claims for and against, and neutral questions), writing styles, and names.
 * Topics and styles are addressed by index everywhere in the engine (typed arrays hold indices),
 * so their order is part of the generated data's meaning: append, never reorder.
 */

export interface Topic {
  /** Key used in files ("nuclear-power"). */
  readonly key: string;
  /** As a sentence names it ("nuclear power"). */
  readonly name: string;
  readonly hashtag: string;
  /** Claims of someone in favour (stance > 0). */
  readonly pro: readonly string[];
  /** Claims of someone against (stance < 0). */
  readonly con: readonly string[];
  /** What someone without a side says or asks. */
  readonly neutral: readonly string[];
}

export const TOPICS: readonly Topic[] = [
  {
    key: "electric-cars",
    name: "electric cars",
    hashtag: "EVs",
    pro: ["Electric cars are the future of driving", "Charging at home beats any petrol station", "EVs are cheaper to run than people think", "Every new car should be electric by now"],
    con: ["Electric cars are overhyped", "The batteries are a mining disaster", "There are nowhere near enough chargers", "EVs are still too expensive for normal families"],
    neutral: ["How long do the batteries really last", "Has anyone driven one through a real winter", "What happens to old batteries"],
  },
  {
    key: "remote-work",
    name: "remote work",
    hashtag: "WFH",
    pro: ["Working from home makes people more productive", "Nobody misses the daily commute", "Remote work lets people live where they want", "Offices are a relic of the last century"],
    con: ["Remote work is killing team spirit", "Juniors learn nothing without an office", "Working from home blurs every boundary", "Companies are right to call people back"],
    neutral: ["Is hybrid the real answer", "How do teams stay in touch remotely", "Does anyone measure productivity properly"],
  },
  {
    key: "ai-art",
    name: "AI art",
    hashtag: "AIArt",
    pro: ["AI art opens creativity to everyone", "AI tools are just a new kind of brush", "Artists who adapt to AI will thrive", "AI images are genuinely beautiful"],
    con: ["AI art is built on stolen work", "AI images flood the internet with junk", "AI art takes jobs from real illustrators", "There is no soul in AI pictures"],
    neutral: ["Who owns an AI generated image", "Can anyone still tell AI art apart", "Should AI art be labelled"],
  },
  {
    key: "bike-lanes",
    name: "bike lanes",
    hashtag: "BikeLanes",
    pro: ["More bike lanes make cities safer", "Cycling to work changed my life", "Bike lanes are good for local shops", "Cities should be built for people, not cars"],
    con: ["Bike lanes just cause traffic jams", "Hardly anyone uses the new bike lanes", "Bike lanes waste road space", "Cyclists ignore the rules anyway"],
    neutral: ["Do bike lanes work in hilly cities", "What about cycling in the rain", "How do other countries plan them"],
  },
  {
    key: "nuclear-power",
    name: "nuclear power",
    hashtag: "Nuclear",
    pro: ["Nuclear power is the cleanest reliable energy", "We need nuclear to hit climate targets", "Modern reactors are extremely safe", "Closing nuclear plants was a huge mistake"],
    con: ["Nuclear power is too dangerous", "Nobody knows where to put the waste", "New reactors always run over budget", "Renewables make nuclear unnecessary"],
    neutral: ["How long does a new plant take to build", "What do small reactors change", "Where does the fuel come from"],
  },
  {
    key: "four-day-week",
    name: "the four-day week",
    hashtag: "FourDayWeek",
    pro: ["A four-day week makes people happier and sharper", "Nobody is productive for five full days", "The four-day week trials were a success", "Long weekends for everyone would fix burnout"],
    con: ["A four-day week would wreck small businesses", "Customers do not stop needing help on Fridays", "The four-day week is a fantasy", "Shorter weeks just mean longer days"],
    neutral: ["Which jobs could actually do it", "Would pay stay the same", "What did the trials really measure"],
  },
  {
    key: "social-media-age",
    name: "age limits on social media",
    hashtag: "KidsOnline",
    pro: ["Kids under sixteen should stay off social media", "Age limits would protect young minds", "Platforms have failed children for years", "Phones at school were a mistake"],
    con: ["Age limits on social media cannot be enforced", "Banning teens just pushes them elsewhere", "Parents should decide, not governments", "Social media helps lonely kids find friends"],
    neutral: ["How would age checks even work", "What age is the right one", "What do teachers think about it"],
  },
  {
    key: "space-spending",
    name: "space exploration",
    hashtag: "Space",
    pro: ["Space exploration pays back many times over", "We should be on Mars within twenty years", "Space research gave us half our technology", "Funding space missions inspires a generation"],
    con: ["Space money should go to problems on Earth", "Mars is a billionaire vanity project", "Space tourism is pure waste", "Robots can explore space far more cheaply"],
    neutral: ["What is the next big mission", "Who pays for the space station", "How far away is a Mars landing really"],
  },
];

export const TOPIC_KEYS: readonly string[] = TOPICS.map((t) => t.key);

/** The index of a topic key, or -1. */
export function topicIndex(key: string): number {
  return TOPIC_KEYS.indexOf(key);
}

/**
 * Writing styles. A style changes the wording of everything a user writes (and, in the latent
 * model, which reaction the user prefers: terse users like, formal users comment).
 */
export const STYLES = ["plain", "enthusiastic", "formal", "sarcastic", "terse"] as const;
export type Style = (typeof STYLES)[number];

export function styleIndex(key: string): number {
  return (STYLES as readonly string[]).indexOf(key);
}

export const GIVEN_NAMES: readonly string[] = [
  "Lin", "Wei", "Mei", "Jun", "Hao", "Yan", "Ling", "Tao", "Xin", "Bo",
  "Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivan", "Jade",
  "Kai", "Lena", "Milo", "Nia", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tess",
  "Uma", "Vic", "Wren", "Yara", "Zane", "Ada", "Bruno", "Cora", "Dara", "Emil",
];

export const FAMILY_NAMES: readonly string[] = [
  "Chen", "Wang", "Li", "Zhang", "Liu", "Zhao", "Huang", "Zhou", "Wu", "Xu",
  "Sun", "Ma", "Hu", "Guo", "He", "Lin", "Luo", "Gao", "Park", "Silva",
  "Novak", "Okafor", "Khan", "Berg", "Costa", "Moreau", "Ito", "Reyes", "Haddad", "Kovacs",
];

/**
 * A display name for user `u` of a population of `size`: given names first, then given + family
 * names, with a number only once every pair is used (so names are unique and stable by index).
 */
export function userName(u: number): string {
  const g = GIVEN_NAMES.length;
  const pairs = g * FAMILY_NAMES.length;
  const given = GIVEN_NAMES[u % g]!;
  const family = FAMILY_NAMES[Math.floor(u / g) % FAMILY_NAMES.length]!;
  const round = Math.floor(u / pairs);
  return round === 0 ? `${given} ${family}` : `${given} ${family} ${round + 1}`;
}
