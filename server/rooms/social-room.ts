/**
 * The `social` room: a generated network of users (up to 10,000) where popular users post on a
 * schedule and the posts spread through ranked feeds (worlds/social). Every user is a seat, played
 * by the latent model's rule agent, a registry agent (a policy, an LLM) or nobody; a person may
 * take the seats the options open to people.
 *
 * Who sees what:
 * - spectators see the cascade grow: the world feed (every item), the feed of every person's seat,
 *   and, on request (`perspective`), any user's view: the items that user has seen or written, in
 *   the order they reached them;
 * - a person sees their own user's feed and perspective (the screen as their turn shows it, their
 *   mental state) and may ask for their own view only; nobody is sent the latent model's plan.
 *
 * A person is asked to act only while their user's app is open (the screen has something new);
 * a post they write (`post`) goes out at the next timestep, app open or not. Episodes are logged as
 * the simulation room logs them (the socialized context without mental states: a room of a
 * thousand users would write a thousand a timestep). With `audit`, each timestep's actions are
 * audited live for items their user was never shown (server/rooms/live-audit.ts): the leaks are
 * marked on the world's timeline, which spectators hold and people do not, and logged with the
 * episode.
 */
import type { Client } from "@colyseus/core";
import { Encoder } from "@colyseus/schema";
import type { Agent, AgentReply, AgentTurn } from "../../worlds/core/agent.js";
import type { Scenario } from "../../worlds/core/scenario.js";
import { loadAgent } from "../../agents/registry.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { itemsSeenBy, KIND_NAMES, playableScenario, socialScenario, TOPICS, world as socialEntry, type SocialAction, type SocialObservation, type SocialState } from "../../worlds/social/index.js";
import { describeIssues, parseOptions, PerspectiveRequestSchema, PostMessageSchema, SocialOptionsSchema, type SocialOptions } from "./options.js";
import { EpisodeRoom, type EpisodeLoopOptions, type EpisodePlan } from "./episode-room.js";
import { LiveAudit } from "./live-audit.js";
import { checkSeatNames, isHumanSeat } from "./seat-names.js";
import { Feed, feedItem, SocialRoomState, type FeedItem } from "./social-state.js";
import { C2S, SOCIAL_C2S, SOCIAL_S2C, type PerspectiveView, type PostResultMessage } from "../protocol.js";
import { pushBounded } from "./state.js";

/** The world feed keeps the newest items up to this many (older ones are in the run's log). */
const MAX_WORLD_FEED = 3000;
/** A user's feed and a requested view hold at most this many items, the newest. */
const MAX_USER_FEED = 2000;
export const WORLD_FEED = "world";

type SocialScenarioPlay = Scenario<SocialState, unknown, unknown>;

export class SocialRoom extends EpisodeRoom<SocialScenarioPlay> {
  protected readonly roomType = "social";
  protected readonly episodeNoun = "cascade";
  private opts!: SocialOptions;
  /** Items of the current episode already in the world feed. */
  private worldShown = 0;
  /** Per person's seat: its user's index and the items already in its feed. */
  private readonly seatFeeds = new Map<string, { user: number; shown: Set<number> }>();
  /** Posts people sent, taken as their action at the next timestep. */
  private readonly posts = new Map<string, { content: string; topic?: string }>();

  private get social(): SocialRoomState {
    return this.state as SocialRoomState;
  }

  private get sim() {
    return (this.current as SocialState).sim;
  }

  protected async create(raw: unknown): Promise<void> {
    const opts = parseOptions(SocialOptionsSchema, raw, "social room");
    this.opts = opts;
    // A full encoding of the state (a spectator joining) must fit the encoder's buffer: past it,
    // Colyseus re-encodes into a larger one, and the spectators' shared view then went out of step
    // (clients failed to decode the patches that followed: "refId not found"). Sized for the seats
    // (about 120 bytes each) and a full world feed of generated texts; the buffer size is static,
    // read when a room's encoder is made, and only ever raised.
    Encoder.BUFFER_SIZE = Math.max(Encoder.BUFFER_SIZE, 64 * 1024 * Math.ceil((opts.users * 120 + MAX_WORLD_FEED * 250 + 32 * 1024) / (64 * 1024)));
    const state = new SocialRoomState();
    state.users = opts.users;
    this.setUp(
      {
        private: opts.private,
        reconnectSeconds: opts.reconnectSeconds,
        title: opts.title ?? `Social media: ${opts.users} users`,
        world: "social",
        tickMs: opts.tickMs,
        turnDeadlineMs: opts.turnDeadlineMs,
      },
      state,
    );
    this.onMessage(SOCIAL_C2S.perspective, (client, message: unknown) => this.onPerspective(client, message));
    this.onMessage(SOCIAL_C2S.post, (client, message: unknown) => this.onPost(client, message));
    // A room restored after its server was killed takes its run up where its log ends.
    const { seed: firstSeed, over } = await this.takeUp(opts.seed);
    const first = this.scenario(firstSeed);
    checkSeatNames(opts, first.world.agents(first.initialState), "social room", "network");
    const controllers = await this.beginEpisode(first, firstSeed);
    await this.startRun({ world: "social", seed: opts.seed, users: opts.users, loop: opts.loop });
    this.startPlaying(over ? undefined : { scenario: first, controllers }, firstSeed);
    this.register();
  }

  protected override messageTypes(): readonly string[] {
    return [...Object.values(C2S), ...Object.values(SOCIAL_C2S)];
  }

  /** Perspectives (the screen, turn by turn) for people's seats only: a thousand users' would be sent every timestep. */
  protected override hasPerspective(seat: { human: boolean }): boolean {
    return seat.human;
  }

  protected override seatObjects(agent: string): readonly object[] {
    const feed = this.social.feeds.get(agent);
    return feed ? [feed] : [];
  }

  protected resolvedOptions(): Record<string, unknown> {
    return { ...this.opts };
  }

  private scenario(seed: number): SocialScenarioPlay {
    const o = this.opts;
    return playableScenario(socialScenario(seed, { users: o.users, posts: o.posts, every: o.every, maxSteps: o.maxSteps })) as SocialScenarioPlay;
  }

  /** Seats, feeds and controllers of a new episode (a policy's checkpoint loads here, the first time). */
  private async beginEpisode(scenario: SocialScenarioPlay, seed: number): Promise<Map<string, Agent<unknown> | undefined>> {
    const names = scenario.world.agents(scenario.initialState);
    const seats = names.map((agent, i) => ({ agent, controller: this.opts.agents[agent] ?? this.opts.defaultAgent, human: isHumanSeat(this.opts.humanSeats, agent, i) }));
    // Feeds first: setAgents shows each seat's holder its feed.
    const feeds = this.social.feeds;
    feeds.clear();
    this.seatFeeds.clear();
    this.posts.clear();
    this.worldShown = 0;
    const world = new Feed();
    world.name = WORLD_FEED;
    feeds.set(WORLD_FEED, world);
    this.showSpectators(world);
    seats.forEach((s, user) => {
      if (!s.human) return;
      const feed = new Feed();
      feed.name = s.agent;
      feeds.set(s.agent, feed);
      this.showSpectators(feed);
      this.seatFeeds.set(s.agent, { user, shown: new Set() });
    });
    this.current = scenario.initialState;
    this.seatEpisode(scenario, seats, seed);
    const controllers = new Map<string, Agent<unknown> | undefined>();
    const loaded = new Map<string, Agent<unknown>>();
    for (const s of seats) {
      if (s.controller === "rule") controllers.set(s.agent, scenario.scripted[s.agent]);
      else if (s.controller === "none") controllers.set(s.agent, undefined);
      else {
        // One agent per spec: a thousand seats of one policy share its weights.
        let a = loaded.get(s.controller);
        if (!a) loaded.set(s.controller, (a = await loadAgent(s.controller)));
        controllers.set(s.agent, a);
      }
    }
    return controllers;
  }

  protected loopOptions(): EpisodeLoopOptions {
    return this.opts;
  }

  protected async nextEpisode(seed: number): Promise<EpisodePlan<SocialScenarioPlay>> {
    const scenario = this.scenario(seed);
    return { scenario, controllers: await this.beginEpisode(scenario, seed) };
  }

  protected seatAgent(agent: string, controller: Agent<unknown> | undefined): Agent<unknown> {
    return new SocialSeat(agent, controller, this);
  }

  protected async playEpisode(plan: EpisodePlan<SocialScenarioPlay>, seed: number): Promise<void> {
    const { scenario, controllers } = plan;
    const world = scenario.world;
    const names = [...controllers.keys()];
    const audit = this.opts.audit ? LiveAudit.of(socialEntry.facts, names, scenario.initialState) : undefined;
    const episode = await this.runPlan(plan, seed, {
      mentalStates: false,
      onTimestep: (rec) => {
        this.recordFeeds();
        this.recordTimestep(rec, this.sourcesAt(rec.timestep, names), audit?.step(rec) ?? "");
      },
    });
    const context = toSocializedContext(episode, { mentalStates: false });
    this.logEpisode({
      episode,
      world: world.name,
      title: scenario.title,
      seed,
      // Seats of people and of controllers other than the rule agent (a thousand rule seats say nothing).
      seats: Object.fromEntries(
        names.flatMap((n) => {
          const seat = this.state.seats.get(n);
          return seat && (seat.human || seat.controller !== "rule") ? [[n, { controller: seat.controller, person: seat.occupant || null }]] : [];
        }),
      ),
      socialized_context: context,
      ...(audit ? { audit: audit.final(context, episode) } : {}),
      // What each user observed is the context's (a thousand screens a timestep, once).
      observations: false,
    });
  }

  /** Appends what is new since the last timestep: every new item to the world feed, and to each person's feed what its user saw. */
  private recordFeeds(): void {
    const sim = this.sim;
    const feeds = this.social.feeds;
    const world = feeds.get(WORLD_FEED);
    for (let i = this.worldShown; i < sim.items.length; i++) pushBounded(world?.items, this.feedItem(i, "", this.sim.items.time[i]!), MAX_WORLD_FEED);
    this.worldShown = sim.items.length;
    for (const [agent, f] of this.seatFeeds) {
      const feed = feeds.get(agent);
      for (const s of itemsSeenBy(sim, f.user)) {
        if (f.shown.has(s.item)) continue;
        f.shown.add(s.item);
        pushBounded(feed?.items, this.feedItem(s.item, s.via, s.time), MAX_USER_FEED);
      }
    }
  }

  private feedItem(i: number, via: string, seen: number): FeedItem {
    const sim = this.sim;
    const it = sim.items;
    const parent = it.parent[i]!;
    return feedItem({
      id: it.id(i),
      kind: KIND_NAMES[it.kind[i]!]!,
      author: sim.nameOf(it.author[i]!),
      parent: parent >= 0 ? it.id(parent) : "",
      depth: it.depth[i]!,
      time: it.time[i]!,
      seen,
      topic: TOPICS[it.topic[i]!]!.key,
      text: sim.textOf(i),
      via,
    });
  }

  // ---- the social room's messages -------------------------------------------------------------

  /** A user's view, for a spectator (any user) or a person (their own). */
  private onPerspective(client: Client, message: unknown): void {
    const parsed = PerspectiveRequestSchema.safeParse(message);
    const user = typeof (message as { user?: unknown } | null)?.user === "string" ? String((message as { user: string }).user).slice(0, 64) : "";
    const reply = (v: PerspectiveView) => client.send(SOCIAL_S2C.perspective, v);
    if (!parsed.success) return reply({ ok: false, user, error: `bad perspective message: ${describeIssues(parsed.error)}` });
    const want = parsed.data.user;
    const seat = this.seatOf(client);
    if (seat !== undefined && seat !== want) return reply({ ok: false, user: want, error: seat ? `a seated person sees their own view only (${seat})` : "your seat has no user in this episode" });
    const u = this.current === undefined ? -1 : this.state.agents.indexOf(want);
    if (u < 0) return reply({ ok: false, user: want, error: `no user "${want}" in this network` });
    const seen = itemsSeenBy(this.sim, u);
    const items = seen.slice(-MAX_USER_FEED).map((s) => this.feedItem(s.item, s.via, s.time).toJSON());
    reply({ ok: true, user: want, time: this.sim.time, items, truncated: seen.length > MAX_USER_FEED });
  }

  /** A person's new post: their user's action at the next timestep. */
  private onPost(client: Client, message: unknown): void {
    const reply = (r: PostResultMessage) => client.send(SOCIAL_S2C.postResult, r);
    const agent = this.seatOf(client);
    if (agent === undefined) return reply({ ok: false, error: "only a seated person can post (join with the seat option)" });
    if (!agent) return reply({ ok: false, error: "your seat has no user in this episode" });
    const parsed = PostMessageSchema.safeParse(message);
    if (!parsed.success) return reply({ ok: false, error: `bad post message: ${describeIssues(parsed.error)}` });
    const { content, topic } = parsed.data;
    if (topic !== undefined && !TOPICS.some((t) => t.key === topic)) return reply({ ok: false, error: `no topic "${topic}" (${TOPICS.map((t) => t.key).join(", ")})` });
    if (this.state.status !== "running") return reply({ ok: false, error: `the room is ${this.state.status}: no post goes out now` });
    if (this.posts.has(agent)) return reply({ ok: false, error: "your last post has not gone out yet: one post a timestep" });
    this.posts.set(agent, { content, ...(topic !== undefined ? { topic } : {}) });
    reply({ ok: true });
  }

  /** The post `agent`'s person queued, taken (once) as their action now. */
  takePost(agent: string, timestep: number): SocialAction | undefined {
    const p = this.posts.get(agent);
    if (!p) return undefined;
    this.posts.delete(agent);
    this.humanOutcomes.set(agent, { timestep, source: "human" });
    return { action: "post", content: p.content, ...(p.topic !== undefined ? { topic: p.topic } : {}) };
  }

  /** Seat hooks for SocialSeat. */
  person(agent: string): string | undefined {
    return this.personIn(agent);
  }

  askPerson(turn: AgentTurn<unknown>, person: string): Promise<AgentReply<unknown>> {
    return this.awaitPerson(turn, person);
  }

}

/**
 * A user's seat: a person's queued post first; then the person, asked only while the user's app
 * is open (a closed app has nothing to act on: the person is not kept waiting every timestep);
 * else the controller (the rule agent acts on the latent plan).
 */
class SocialSeat implements Agent<unknown> {
  readonly id: string;

  constructor(
    readonly agent: string,
    private readonly controller: Agent<unknown> | undefined,
    private readonly room: SocialRoom,
  ) {
    this.id = controller?.id ?? "none";
  }

  get trusted(): boolean {
    return this.room.person(this.agent) === undefined && (this.controller === undefined || this.controller.trusted === true);
  }

  act(turn: AgentTurn<unknown>): AgentReply<unknown> | Promise<AgentReply<unknown>> {
    const person = this.room.person(this.agent);
    if (person !== undefined) {
      const post = this.room.takePost(this.agent, turn.timestep);
      if (post) return { action: post, info: { person } };
      if (!(turn.observation.data as SocialObservation | undefined)?.open) return { action: CLOSE };
      return this.room.askPerson(turn, person);
    }
    return this.controller ? this.controller.act(turn) : { action: CLOSE };
  }
}

const CLOSE: SocialAction = Object.freeze({ action: "ignore" });
