/**
 * The social world's engine: users, follow graph, items, feeds, sessions and the exact record of
 * who has seen what, all in typed arrays (no object per user or per item), mutated in place.
 * The World (world.ts) clones it before each step to stay pure; the headless runner and the
 * generator own one and step it directly.
 *
 * How a feed works. Every item a user creates (post, comment, repost; likes are not feed items)
 * is pushed to each follower's inbox, a ring of the `inboxCapacity` newest entries; every reaction
 * to a user's item is pushed to that user's notifications. A user with something in either
 * starts a session with probability `activity` per step; the session opens on a screen of the
 * pending notifications, then the inbox's fresh (`window` steps), unseen items ranked by
 * recency, engagement and the user's interest in the topic, truncated to `feedSize`. Showing an
 * item shows its ancestors (a repost shows what it reposts, a reply what it answers): all are
 * recorded as seen, at that time, with how (feed, notification, context or own).
 *
 * What the latent model does. On first seeing an item a user decides, once, what to do with it
 * (behavior.ts): those that are not "ignore" are the user's intents, what the user noticed and
 * means to do. A screen is filled only while the user's intents can hold every decision it could
 * bring (`attention`), so none is ever dropped; the rule agent acts on one intent per step, most
 * likely first, and closes the app (the no-op) when none is left. People and models in a seat see
 * the same screen and do what they like; their acts count the same.
 */
import { decide, drawsFor, IGNORE, reactProbability, stanceAfter, type Decision, type Draws } from "./behavior.js";
import { followersOf, type FollowGraph } from "./graph.js";
import { COMMENT, ItemTable, LIKE, POST, REPOST, type ItemKind } from "./items.js";
import { PairTable } from "./pair-table.js";
import { nameOf, TOPIC_COUNT, type Population } from "./population.js";
import { writeText } from "./text.js";
import type { Rng } from "../core/rng.js";

/** How an item reached a user (the tag of the seen record). */
export const VIA_FEED = 0;
export const VIA_NOTIFICATION = 1;
export const VIA_CONTEXT = 2;
export const VIA_OWN = 3;
export const VIA_NAMES = ["feed", "notification", "context", "own"] as const;

export interface SimConfig {
  /** Seeds the latent draws (an unsigned 32-bit integer). */
  readonly seed: number;
  /** Items a screen shows from the inbox (default 5). */
  readonly feedSize: number;
  /** Newest inbox entries kept per user (default 16, at most 255). */
  readonly inboxCapacity: number;
  /** Newest notifications kept, and shown, per session (default 5, at most 255). */
  readonly notificationCapacity: number;
  /** Steps an item stays fresh enough for a feed or a notification (default 24). */
  readonly window: number;
  /** The deepest reaction allowed: 0 lets users react to root posts only (default 1). */
  readonly maxDepth: number;
  /** How far acting on an item moves the actor's stance (default 0.1). */
  readonly influence: number;
  /** Intents a session can hold (default 8, at most 255); a session lasts at most attention + 1 steps. */
  readonly attention: number;
  /** Offset of the latent model's reaction logit (behavior.ts; default 0). */
  readonly engagement: number;
}

export const DEFAULT_SIM_CONFIG: SimConfig = {
  seed: 0,
  feedSize: 5,
  inboxCapacity: 16,
  notificationCapacity: 5,
  window: 24,
  maxDepth: 1,
  influence: 0.1,
  attention: 8,
  engagement: 0,
};

// Feed ranking: recency (decays over 8 steps), engagement (log), interest in the topic, posts first.
const RANK_RECENCY = 1;
const RANK_ENGAGEMENT = 0.5;
const RANK_INTEREST = 1;
const RANK_POST = 0.3;

/** A decision the latent model took, for whoever records the ground truth (the generator). */
export interface DecisionRecord {
  readonly user: number;
  readonly item: number;
  /** The user's stance on the item's topic when deciding. */
  readonly stance: number;
  readonly direct: boolean;
  /** Items of the same cascade the user had decided on before. */
  readonly earlier: number;
  readonly canReact: boolean;
  readonly draws: Draws;
  readonly decision: Decision;
  readonly time: number;
}

export interface SimStats {
  agentSteps: number;
  sessions: number;
  decisions: number;
  actions: number;
}

export class SocialSim {
  readonly config: SimConfig;
  readonly population: Population;
  readonly graph: FollowGraph;
  readonly size: number;
  /** Current stances, size x TOPIC_COUNT (the population holds the initial ones). */
  stance: Float32Array;
  items: ItemTable;
  /** (item, user) -> time first seen, tagged with VIA_*. */
  seen: PairTable;
  /** (target, user) -> the user's reaction item, tagged with its kind. */
  reacted: PairTable;
  /** (root post, user) -> how many items of that cascade the user has decided on. */
  decided: PairTable;
  inbox: Uint32Array;
  inboxLen: Uint8Array;
  inboxNext: Uint8Array;
  notes: Uint32Array;
  notesLen: Uint8Array;
  notesNext: Uint8Array;
  /** 1 while a user's session is open. */
  session: Uint8Array;
  sessionAge: Uint8Array;
  /** The screen: items shown at the session's start (size x displayCapacity), and how each came. */
  display: Uint32Array;
  displayVia: Uint8Array;
  displayLen: Uint8Array;
  /** What the user noticed and means to do, most likely first (size x attention). */
  intents: Uint32Array;
  intentKind: Uint8Array;
  /** The stance the user had when deciding (what the text will say). */
  intentStance: Float32Array;
  intentLen: Uint8Array;
  time = 0;
  /** Time of the newest item (-Infinity before any). */
  lastCreated = -Infinity;
  openSessions = 0;
  stats: SimStats = { agentSteps: 0, sessions: 0, decisions: 0, actions: 0 };
  /** Called on every latent decision (not copied by clone). */
  onDecision: ((d: DecisionRecord) => void) | undefined;

  // Scratch for ranking a feed (inbox capacity entries).
  private readonly rankItem: Uint32Array;
  private readonly rankScore: Float64Array;
  private readonly priority: Float64Array;

  constructor(population: Population, graph: FollowGraph, config: Partial<SimConfig> = {}) {
    if (graph.size !== population.size) throw new RangeError(`a graph of ${graph.size} users for a population of ${population.size}`);
    const c: SimConfig = { ...DEFAULT_SIM_CONFIG, ...config };
    for (const k of ["inboxCapacity", "notificationCapacity", "attention", "feedSize"] as const) {
      if (!Number.isInteger(c[k]) || c[k] < 1 || c[k] > 255) throw new RangeError(`${k} must be an integer in [1, 255], got ${c[k]}`);
    }
    if (!Number.isInteger(c.maxDepth) || c.maxDepth < 0 || c.maxDepth > 1000) throw new RangeError(`maxDepth must be an integer in [0, 1000], got ${c.maxDepth}`);
    if (!Number.isInteger(c.window) || c.window < 1) throw new RangeError(`window must be a positive integer, got ${c.window}`);
    if (!(c.influence >= 0 && c.influence <= 1)) throw new RangeError(`influence must be in [0, 1], got ${c.influence}`);
    this.config = Object.freeze({ ...c, seed: c.seed >>> 0 });
    this.population = population;
    this.graph = graph;
    const n = (this.size = population.size);
    this.rankItem = new Uint32Array(Math.max(c.inboxCapacity, c.notificationCapacity));
    this.rankScore = new Float64Array(c.inboxCapacity);
    this.priority = new Float64Array(c.attention);
    this.stance = population.stances.slice();
    this.items = new ItemTable(256);
    this.seen = new PairTable(1024);
    this.reacted = new PairTable(256);
    this.decided = new PairTable(256);
    this.inbox = new Uint32Array(n * c.inboxCapacity);
    this.inboxLen = new Uint8Array(n);
    this.inboxNext = new Uint8Array(n);
    this.notes = new Uint32Array(n * c.notificationCapacity);
    this.notesLen = new Uint8Array(n);
    this.notesNext = new Uint8Array(n);
    this.session = new Uint8Array(n);
    this.sessionAge = new Uint8Array(n);
    this.display = new Uint32Array(n * this.displayCapacity);
    this.displayVia = new Uint8Array(n * this.displayCapacity);
    this.displayLen = new Uint8Array(n);
    this.intents = new Uint32Array(n * c.attention);
    this.intentKind = new Uint8Array(n * c.attention);
    this.intentStance = new Float32Array(n * c.attention);
    this.intentLen = new Uint8Array(n);
  }

  get displayCapacity(): number {
    return this.config.feedSize + this.config.notificationCapacity;
  }

  nameOf(u: number): string {
    return nameOf(this.population, u);
  }

  /** An independent copy (the population and graph, which never change, and the scratch space are shared). */
  clone(): SocialSim {
    const s = Object.create(SocialSim.prototype) as SocialSim;
    Object.assign(s, this, {
      stance: this.stance.slice(),
      items: this.items.clone(),
      seen: this.seen.clone(),
      reacted: this.reacted.clone(),
      decided: this.decided.clone(),
      inbox: this.inbox.slice(),
      inboxLen: this.inboxLen.slice(),
      inboxNext: this.inboxNext.slice(),
      notes: this.notes.slice(),
      notesLen: this.notesLen.slice(),
      notesNext: this.notesNext.slice(),
      session: this.session.slice(),
      sessionAge: this.sessionAge.slice(),
      display: this.display.slice(),
      displayVia: this.displayVia.slice(),
      displayLen: this.displayLen.slice(),
      intents: this.intents.slice(),
      intentKind: this.intentKind.slice(),
      intentStance: this.intentStance.slice(),
      intentLen: this.intentLen.slice(),
      stats: { ...this.stats },
      onDecision: undefined,
    });
    return s;
  }

  // --- what the world knows --------------------------------------------------------------

  hasSeen(user: number, item: number): boolean {
    return this.seen.has(item, user);
  }

  /** When `user` first saw `item`, or -1. */
  seenAt(user: number, item: number): number {
    return this.seen.get(item, user);
  }

  /** How `user` first saw `item` (VIA_*), or -1. */
  seenVia(user: number, item: number): number {
    return this.seen.tag(item, user);
  }

  /** Everyone who has seen `item`, with when and how, in order of time then user (scans the record). */
  viewersOf(item: number): { user: number; time: number; via: number }[] {
    const out: { user: number; time: number; via: number }[] = [];
    this.seen.forEach((i, u, t, via) => {
      if (i === item) out.push({ user: u, time: t, via });
    });
    return out.sort((a, b) => a.time - b.time || a.user - b.user);
  }

  /** The reaction item of `user` to `target`, or -1. */
  reactionOf(user: number, target: number): number {
    return this.reacted.get(target, user);
  }

  /** The text of an item: as written, or as the latent model words it. */
  textOf(i: number): string {
    const items = this.items;
    const written = items.texts.get(i);
    if (written !== undefined) return written;
    return this.latentText(items.kind[i]!, items.author[i]!, items.parent[i]!, items.stance[i]!, items.textSeed[i]!, items.topic[i]!);
  }

  /**
   * What the latent model writes for a `kind` item by `author` answering `parent` (-1 for a post)
   * with stance `stance`: the text of an item it wrote, or of one it means to write.
   */
  latentText(kind: number, author: number, parent: number, stance: number, seed: number, topic = this.items.topic[parent]!): string {
    if (kind === LIKE) return "";
    const items = this.items;
    return writeText({
      kind,
      topic,
      stance,
      parentStance: parent >= 0 ? items.stance[parent]! : 0,
      style: this.population.styles[author]!,
      ...(kind === COMMENT && parent >= 0 && items.parent[parent]! >= 0 ? { replyTo: this.nameOf(items.author[parent]!) } : {}),
      seed,
    });
  }

  /** Why `user` may not react to `target` now, or undefined. */
  whyNotReact(user: number, target: number): string | undefined {
    const items = this.items;
    if (target < 0 || target >= items.length) return "there is no such item";
    if (items.kind[target] === LIKE) return "a like cannot be answered";
    if (items.author[target] === user) return "this is your own item";
    if (!this.seen.has(target, user)) return "you have not seen this item";
    if (this.reacted.has(target, user)) return "you have already reacted to this item";
    if (items.depth[target]! + 1 > this.config.maxDepth) return `replies here would be deeper than the limit (${this.config.maxDepth})`;
    return undefined;
  }

  /** No open session and nothing fresh anywhere: the cascade has died out. */
  isQuiet(): boolean {
    return this.openSessions === 0 && this.time - this.lastCreated > this.config.window;
  }

  // --- acts ----------------------------------------------------------------------------

  /** A new root post by `author`, now. Its stance is the author's unless given. */
  post(author: number, topic: number, text?: string, stance?: number): number {
    if (topic < 0 || topic >= TOPIC_COUNT) throw new RangeError(`no topic ${topic}`);
    const s = stance ?? this.stance[author * TOPIC_COUNT + topic]!;
    const seed = drawsFor(this.config.seed, author, 0x40000000 + this.items.length).text;
    const i = this.items.add(POST, author, -1, this.time, topic, s, seed, text);
    this.created(author, i);
    return i;
  }

  /**
   * `user` reacts to `target` (the caller has checked whyNotReact). Acting on an intent writes
   * what the intent meant (the stance when deciding); a text, when given, is what was written.
   */
  react(user: number, target: number, kind: typeof COMMENT | typeof REPOST | typeof LIKE, text?: string): number {
    const items = this.items;
    const topic = items.topic[target]!;
    const k = user * TOPIC_COUNT + topic;
    const meant = this.dropIntent(user, target);
    const stance = Number.isNaN(meant) ? this.stance[k]! : meant;
    const seed = drawsFor(this.config.seed, user, target).text;
    const i = items.add(kind as ItemKind, user, target, this.time, topic, stance, seed, text);
    this.reacted.add(target, user, i, kind);
    this.stance[k] = stanceAfter(this.stance[k]!, items.stance[target]!, kind as Decision, this.config.influence);
    const to = items.author[target]!;
    if (to !== user) this.notify(to, i);
    this.created(user, i);
    return i;
  }

  /** The user passes on `target`: whatever they meant to do with it, they will not. */
  pass(user: number, target: number): void {
    this.dropIntent(user, target);
  }

  /** Removes the user's intent on `target`; returns the stance it was decided with, or NaN if there was none. */
  private dropIntent(user: number, target: number): number {
    const a = this.config.attention;
    const base = user * a;
    const n = this.intentLen[user]!;
    for (let j = 0; j < n; j++) {
      if (this.intents[base + j] !== target) continue;
      const stance = this.intentStance[base + j]!;
      this.intents.copyWithin(base + j, base + j + 1, base + n);
      this.intentKind.copyWithin(base + j, base + j + 1, base + n);
      this.intentStance.copyWithin(base + j, base + j + 1, base + n);
      this.intentLen[user] = n - 1;
      return stance;
    }
    return NaN;
  }

  /** The user closes the app: the session ends, and what was left on the screen with it. */
  close(user: number): void {
    if (this.session[user] === 0) return;
    this.session[user] = 0;
    this.sessionAge[user] = 0;
    this.displayLen[user] = 0;
    this.intentLen[user] = 0;
    this.openSessions--;
  }

  /**
   * The headless step: every user acts as the rule agent (react on the first intent, close the
   * app when none is left), then time advances. Returns the number of reactions.
   */
  stepRuleAgents(rng: Rng): number {
    const a = this.config.attention;
    let acted = 0;
    const n = this.size;
    for (let u = 0; u < n; u++) {
      if (this.session[u] === 0) continue;
      if (this.intentLen[u] === 0) {
        this.close(u);
        continue;
      }
      const target = this.intents[u * a]!;
      this.react(u, target, this.intentKind[u * a]! as typeof COMMENT | typeof REPOST | typeof LIKE);
      acted++;
    }
    this.advance(rng);
    return acted;
  }

  /**
   * The clock moves on: sessions that ran out close, and users with something new open the app
   * with their activity's probability (one draw each, in user order) and get their screen.
   */
  advance(rng: Rng): void {
    this.time++;
    const n = this.size;
    this.stats.agentSteps += n;
    const maxAge = this.config.attention + 1;
    const activity = this.population.activity;
    for (let u = 0; u < n; u++) {
      if (this.session[u] === 1) {
        if (++this.sessionAge[u]! > maxAge) this.close(u);
        else continue;
      }
      if (this.inboxLen[u] === 0 && this.notesLen[u] === 0) continue;
      if (rng.next() >= activity[u]!) continue;
      this.refresh(u);
      if (this.displayLen[u]! > 0) {
        this.session[u] = 1;
        this.sessionAge[u] = 0;
        this.openSessions++;
        this.stats.sessions++;
      }
    }
  }

  // --- internals -----------------------------------------------------------------------

  /** A new item by `author`: seen by its author, pushed to every follower's inbox (a like is not a feed item). */
  private created(author: number, i: number): void {
    this.seen.add(i, author, this.time, VIA_OWN);
    this.lastCreated = this.time;
    this.stats.actions++;
    if (this.items.kind[i] === LIKE) return;
    const g = this.graph;
    const cap = this.config.inboxCapacity;
    const end = g.followerStart[author + 1]!;
    for (let j = g.followerStart[author]!; j < end; j++) {
      const f = g.followers[j]!;
      const next = this.inboxNext[f]!;
      this.inbox[f * cap + next] = i;
      this.inboxNext[f] = next + 1 === cap ? 0 : next + 1;
      if (this.inboxLen[f]! < cap) this.inboxLen[f]!++;
    }
  }

  private notify(user: number, i: number): void {
    const cap = this.config.notificationCapacity;
    const next = this.notesNext[user]!;
    this.notes[user * cap + next] = i;
    this.notesNext[user] = next + 1 === cap ? 0 : next + 1;
    if (this.notesLen[user]! < cap) this.notesLen[user]!++;
  }

  private fresh(i: number): boolean {
    return this.time - this.items.time[i]! <= this.config.window;
  }

  /** Items of `x`'s chain (x, its parent, ...) the user has not seen and could decide on. */
  private undecided(user: number, x: number): number {
    const items = this.items;
    let need = 0;
    for (let y = x; y >= 0; y = items.parent[y]!) {
      if (this.seen.has(y, user)) break;
      if (items.author[y] !== user && items.kind[y] !== LIKE) need++;
    }
    return need;
  }

  /** Shows `x` (and its unseen ancestors) on the user's screen, if the intents can hold what it may bring. */
  private show(user: number, x: number, via: number): boolean {
    if (this.intentLen[user]! + this.undecided(user, x) > this.config.attention) return false;
    const d = user * this.displayCapacity + this.displayLen[user]!;
    this.display[d] = x;
    this.displayVia[d] = via;
    this.displayLen[user]!++;
    const items = this.items;
    for (let y = x; y >= 0; y = items.parent[y]!) {
      // Whoever has seen an item has seen its ancestors: the first one seen ends the walk.
      if (!this.seen.add(y, user, this.time, y === x ? via : VIA_CONTEXT)) break;
      if (items.author[y] !== user && items.kind[y] !== LIKE) this.decideOnSight(user, y);
    }
    return true;
  }

  private decideOnSight(user: number, y: number): void {
    const items = this.items;
    const topic = items.topic[y]!;
    const k = user * TOPIC_COUNT + topic;
    const parent = items.parent[y]!;
    const input = {
      interest: this.population.interests[k]!,
      stance: this.stance[k]!,
      itemStance: items.stance[y]!,
      direct: parent >= 0 && items.author[parent] === user,
      earlier: this.decided.increment(items.root[y]!, user),
      style: this.population.styles[user]!,
      canReact: items.depth[y]! + 1 <= this.config.maxDepth,
      engagement: this.config.engagement,
    };
    const draws = drawsFor(this.config.seed, user, y);
    const decision = decide(input, draws);
    this.stats.decisions++;
    this.onDecision?.({ user, item: y, stance: input.stance, direct: input.direct, earlier: input.earlier, canReact: input.canReact, draws, decision, time: this.time });
    if (decision === IGNORE) return;
    // Insert by likelihood (ties: the earlier item first).
    const a = this.config.attention;
    const p = reactProbability(input);
    let j = this.intentLen[user]!;
    while (j > 0 && (this.priority[j - 1]! < p || (this.priority[j - 1] === p && this.intents[user * a + j - 1]! > y))) {
      this.intents[user * a + j] = this.intents[user * a + j - 1]!;
      this.intentKind[user * a + j] = this.intentKind[user * a + j - 1]!;
      this.intentStance[user * a + j] = this.intentStance[user * a + j - 1]!;
      this.priority[j] = this.priority[j - 1]!;
      j--;
    }
    this.intents[user * a + j] = y;
    this.intentKind[user * a + j] = decision;
    this.intentStance[user * a + j] = input.stance;
    this.priority[j] = p;
    this.intentLen[user]!++;
  }

  private rank(user: number, x: number): number {
    const items = this.items;
    const age = this.time - items.time[x]!;
    return (
      RANK_RECENCY * Math.exp(-age / 8) +
      RANK_ENGAGEMENT * Math.log1p(items.engagement(x)) +
      RANK_INTEREST * this.population.interests[user * TOPIC_COUNT + items.topic[x]!]! +
      (items.kind[x] === POST ? RANK_POST : 0)
    );
  }

  /** Opens the user's screen: fresh notifications, then the best fresh unseen feed items. */
  private refresh(user: number): void {
    this.displayLen[user] = 0;
    this.intentLen[user] = 0;
    // Notifications, oldest first; those that do not fit stay for the next session.
    const nc = this.config.notificationCapacity;
    const nlen = this.notesLen[user]!;
    let keep = 0;
    const first = (this.notesNext[user]! - nlen + nc) % nc;
    for (let j = 0; j < nlen; j++) {
      const x = this.notes[user * nc + ((first + j) % nc)]!;
      if (!this.fresh(x) || this.seen.has(x, user)) continue;
      if (!this.show(user, x, VIA_NOTIFICATION)) this.rankItem[keep++] = x;
    }
    for (let j = 0; j < keep; j++) this.notes[user * nc + j] = this.rankItem[j]!;
    this.notesLen[user] = keep;
    this.notesNext[user] = keep % nc;

    // The feed: rank what is fresh and unseen, show the best that fit.
    const cap = this.config.inboxCapacity;
    const len = this.inboxLen[user]!;
    const start = (this.inboxNext[user]! - len + cap) % cap;
    let m = 0;
    for (let j = 0; j < len; j++) {
      const x = this.inbox[user * cap + ((start + j) % cap)]!;
      if (!this.fresh(x) || this.seen.has(x, user)) continue;
      this.rankItem[m] = x;
      this.rankScore[m] = this.rank(user, x);
      m++;
    }
    let shown = 0;
    let full = false;
    while (shown < this.config.feedSize && !full) {
      let best = -1;
      for (let j = 0; j < m; j++) {
        if (best < 0 || this.rankScore[j]! > this.rankScore[best]! || (this.rankScore[j] === this.rankScore[best] && this.rankItem[j]! < this.rankItem[best]!)) best = j;
      }
      if (best < 0) break;
      const x = this.rankItem[best]!;
      // Showing an earlier item may have shown this one as context.
      if (!this.seen.has(x, user)) {
        if (this.show(user, x, VIA_FEED)) shown++;
        else full = true;
      }
      if (!full) {
        this.rankItem[best] = this.rankItem[m - 1]!;
        this.rankScore[best] = this.rankScore[m - 1]!;
        m--;
      }
    }
    // What was not shown stays in the inbox, for the next session.
    let r = 0;
    for (let j = 0; j < m; j++) {
      const x = this.rankItem[j]!;
      if (!this.seen.has(x, user)) this.inbox[user * cap + r++] = x;
    }
    this.inboxLen[user] = r;
    this.inboxNext[user] = r % cap;
  }

  /** Bytes held in typed arrays (what the scale table reports beside the process's memory). */
  bytes(): number {
    let b = this.stance.byteLength + this.items.bytes() + this.seen.bytes() + this.reacted.bytes() + this.decided.bytes();
    for (const a of [this.inbox, this.inboxLen, this.inboxNext, this.notes, this.notesLen, this.notesNext, this.session, this.sessionAge, this.display, this.displayVia, this.displayLen, this.intents, this.intentKind, this.intentStance, this.intentLen]) b += a.byteLength;
    return b;
  }
}
