/**
 * Aligns the events of a ground-truth context with the timesteps of a generated one, by what they
 * say rather than by index: the two may cut time differently. Ours puts an action at one timestep
 * and what it caused in the next one's state; a generated context often gives each event its own
 * timestep, whose state describes it (or says <same_as_last_action />), and may merge or split
 * events.
 *
 * An event is a ground-truth timestep whose state is not none, described by the actions that
 * caused it and its state. A generated timestep describes an event as much as its state, one of
 * its explicit observations, or the actions that caused it (the previous timestep's or its own,
 * whichever convention the context follows: `actionTiming`) share the event's words:
 * IDF-weighted Dice overlap of content-word stems (a small verb lexicon maps the benchmarks'
 * synonyms together: left/exited, joined/entered, put/moved, said/told), IDF over both contexts so
 * that names and rooms, which every event mentions, weigh less than the verbs and objects that tell
 * events apart. The alignment is monotone (events keep their order) and maximises the total
 * overlap by dynamic programming; a generated timestep may stand for several consecutive events (a
 * small cost keeps one-to-one matches first), and an event whose best overlap stays under
 * MIN_SIMILARITY is left unmatched.
 */

export const MIN_SIMILARITY = 0.34;
const REUSE_COST = 0.1;

const STOP = new Set(
  "a an the is are was were be been being am it its this that these those there here of in on at to into onto from by for with and or but as so then than now also still just very too not no nor some any all each every both either neither which who whom whose what when where why how he she they them his her their him we us our you your i me my mine".split(
    " ",
  ),
);

/** Verb forms the three benchmarks' stories and generated contexts use for the same event. */
const LEXICON: Readonly<Record<string, string>> = Object.fromEntries(
  (
    [
      ["exit", "exit exits exited exiting leave leaves leaving left depart departs departed departing"],
      ["enter", "enter enters entered entering join joins joined joining arrive arrives arrived arriving come comes came coming return returns returned returning"],
      ["move", "move moves moved moving put puts putting place places placed placing transfer transfers transferred transferring relocate relocates relocated"],
      ["say", "say says said saying tell tells told telling ask asks asked asking reply replies replied"],
      ["stay", "stay stays stayed staying remain remains remained remaining"],
    ] as const
  ).flatMap(([stem, forms]) => forms.split(" ").map((f) => [f, stem])),
);

function stem(word: string): string {
  const mapped = LEXICON[word];
  if (mapped) return mapped;
  let w = word;
  for (const suffix of ["ing", "ed", "es", "s"]) {
    if (w.length > suffix.length + 2 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  return w.length > 3 && w.endsWith("e") ? w.slice(0, -1) : w;
}

/** Content-word stems of a text; underscores split words ("green_crate" = "green crate"). */
export function contentStems(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().split(/[^a-z0-9]+/)) if (w && !STOP.has(w)) out.add(stem(w));
  return out;
}

export interface View {
  readonly text: string;
  /** Multiplies the overlap: a weaker kind of evidence that the timestep shows the event. */
  readonly weight: number;
}

export interface AlignInput {
  /** Ground-truth event texts, in order. */
  readonly events: readonly string[];
  /** Per generated timestep, the texts that may describe an event. */
  readonly timesteps: readonly (readonly View[])[];
}

export interface Alignment {
  /** Per event, the generated timestep that describes it, or null. */
  readonly match: readonly (number | null)[];
  /** Per event, the overlap with its match (0 when unmatched). */
  readonly similarity: readonly number[];
}

export function align(input: AlignInput): Alignment {
  const ev = input.events.map(contentStems);
  const ts = input.timesteps.map((views) => views.map((v) => ({ stems: contentStems(v.text), weight: v.weight })));
  const idf = idfOf([...ev, ...ts.map((v) => new Set(v.flatMap((s) => [...s.stems])))]);
  const n = ev.length;
  const m = ts.length;
  const sim: number[][] = ev.map((e) => ts.map((views) => Math.max(0, ...views.map((v) => v.weight * dice(e, v.stems, idf)))));

  // f[i][j]: best total aligning events [0, i) within timesteps [0, j).
  const f = Array.from({ length: n + 1 }, () => new Float64Array(m + 1));
  const how = Array.from({ length: n + 1 }, () => new Uint8Array(m + 1)); // 0 skip timestep, 1 skip event, 2 match, 3 match again
  for (let i = 0; i <= n; i++) {
    for (let j = 0; j <= m; j++) {
      if (i === 0 && j === 0) continue;
      let best = -Infinity;
      let choice = 0;
      const consider = (value: number, c: number) => {
        if (value > best + 1e-12) {
          best = value;
          choice = c;
        }
      };
      // Priority on ties: a fresh match, a shared one, then skipping.
      if (i > 0 && j > 0 && sim[i - 1]![j - 1]! >= MIN_SIMILARITY) {
        consider(f[i - 1]![j - 1]! + sim[i - 1]![j - 1]!, 2);
        if (i > 1) consider(f[i - 1]![j]! + sim[i - 1]![j - 1]! - REUSE_COST, 3);
      }
      if (i > 0) consider(f[i - 1]![j]!, 1);
      if (j > 0) consider(f[i]![j - 1]!, 0);
      f[i]![j] = best;
      how[i]![j] = choice;
    }
  }
  const match: (number | null)[] = new Array(n).fill(null);
  const similarity: number[] = new Array(n).fill(0);
  let i = n;
  let j = m;
  while (i > 0 || j > 0) {
    const c = how[i]![j]!;
    if (c === 0) j--;
    else if (c === 1) i--;
    else {
      match[i - 1] = j - 1;
      similarity[i - 1] = sim[i - 1]![j - 1]!;
      if (c === 2) j--;
      i--;
    }
  }
  return { match, similarity };
}

/**
 * When a context puts an event's action: in the timestep before the one whose state shows it (our
 * convention, and the social-world-model project's "state is the state before the actions"), or
 * in the same timestep (a context that gives each event its own timestep often does). Whichever
 * matches the states better over the whole context.
 */
export function actionTiming(steps: readonly { readonly state: string; readonly actions: string; readonly previousActions: string }[]): "next" | "same" {
  let next = 0;
  let same = 0;
  for (const s of steps) {
    if (s.state === "") continue;
    const state = contentStems(s.state);
    next += plainDice(state, contentStems(s.previousActions));
    same += plainDice(state, contentStems(s.actions));
  }
  return same > next ? "same" : "next";
}

function plainDice(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let both = 0;
  for (const t of a) if (b.has(t)) both++;
  return a.size + b.size === 0 ? 0 : (2 * both) / (a.size + b.size);
}

function idfOf(docs: readonly ReadonlySet<string>[]): Map<string, number> {
  const df = new Map<string, number>();
  for (const d of docs) for (const t of d) df.set(t, (df.get(t) ?? 0) + 1);
  const out = new Map<string, number>();
  for (const [t, k] of df) out.set(t, Math.log(1 + docs.length / k));
  return out;
}

function dice(a: ReadonlySet<string>, b: ReadonlySet<string>, idf: ReadonlyMap<string, number>): number {
  let wa = 0;
  let wb = 0;
  let both = 0;
  for (const t of a) {
    const w = idf.get(t) ?? 0;
    wa += w;
    if (b.has(t)) both += w;
  }
  for (const t of b) wb += idf.get(t) ?? 0;
  return wa + wb === 0 ? 0 : (2 * both) / (wa + wb);
}
