/**
 * Words the ToMi and Hi-ToM generators draw from. Our own lists, in the style of the original
 * generators (single-token nouns, multi-word ones joined by underscores, containers prefixed by a
 * colour), so generated files read like the benchmark's.
 */
export const AGENT_NAMES = [
  "Abigail", "Aiden", "Alexander", "Amelia", "Aria", "Ava", "Avery", "Benjamin", "Carter", "Charlotte",
  "Chloe", "Elizabeth", "Ella", "Emily", "Emma", "Ethan", "Evelyn", "Hannah", "Hunter", "Isabella",
  "Isla", "Jack", "Jackson", "Jacob", "James", "Jayden", "Liam", "Lily", "Logan", "Lucas",
  "Mason", "Mia", "Mila", "Nathan", "Noah", "Oliver", "Olivia", "Owen", "Sophia", "William",
] as const;

export const ROOMS = [
  "attic", "back_yard", "basement", "bathroom", "bedroom", "cellar", "closet", "crawlspace", "den",
  "dining_room", "front_yard", "garage", "garden", "hall", "hallway", "kitchen", "laundry", "living_room",
  "lounge", "master_bedroom", "office", "patio", "playroom", "porch", "staircase", "study", "sunroom",
  "TV_room", "workshop",
] as const;

export const CONTAINER_KINDS = [
  "basket", "bathtub", "bottle", "box", "bucket", "container", "crate", "cupboard", "drawer", "envelope",
  "pantry", "suitcase", "treasure_chest",
] as const;

export const COLOURS = ["blue", "green", "red"] as const;

export const OBJECTS = [
  "apple", "asparagus", "banana", "beans", "belt", "boots", "broccoli", "cabbage", "cap", "carrot", "celery",
  "cherry", "coat", "corn", "cucumber", "dress", "eggplant", "gloves", "grapefruit", "grapes", "green_pepper",
  "hat", "jacket", "jeans", "lemon", "lettuce", "lime", "melon", "onion", "orange", "pajamas", "pants",
  "peach", "pear", "peas", "persimmon", "pineapple", "plum", "potato", "pumpkin", "radish", "raincoat",
  "scarf", "shirt", "shoes", "skirt", "slacks", "slippers", "socks", "spinach", "stockings", "strawberry",
  "suit", "sweater", "sweet_potato", "t-shirt", "tangerine", "tie", "tomato", "trousers", "turnip",
  "watermelon",
] as const;

export const REMARK_VERBS = ["likes", "dislikes", "loves", "hates"] as const;

/**
 * Words of ToMi's own generator (its world.json) that ours does not draw from, so that readers
 * recognise them in ToMi files (ParaphrasedToMi uses them). Kept apart so generated stories stay as
 * they are: "pantry" is both a room and a container kind in ToMi, which a generator should avoid.
 */
export const TOMI_EXTRA_ROOMS = ["pantry"] as const;
export const TOMI_EXTRA_OBJECTS = ["sweatshirt", "underclothes", "underpants", "undershirt"] as const;

/** Every colour-prefixed container ("green_crate"). */
export const CONTAINERS: readonly string[] = COLOURS.flatMap((c) => CONTAINER_KINDS.map((k) => `${c}_${k}`));
