/**
 * What both room types share: seats and who holds them, joining as a spectator or into a seat,
 * the StateViews that keep private perspectives private, the person's turn (observation, action
 * schema, deadline), reconnection, and the messages a client may send.
 *
 * Privacy rests on one rule: a client's StateView holds the Perspectives it may see and nothing
 * else. Spectators of a public room (and holders of a private room's spectator token) share one
 * view that holds every perspective; each seated client has a view of its own holding only its
 * agent's. Turn messages go only to the seat's holder.
 */
import { randomBytes } from "node:crypto";
import { CloseCode, ErrorCode, matchMaker, Room, ServerError, type Client } from "@colyseus/core";
import { StateView } from "@colyseus/schema";
import { z } from "zod";
import type { AgentReply, AgentTurn } from "../../worlds/core/agent.js";
import type { TimestepRecord } from "../../worlds/core/episode.js";
import type { World } from "../../worlds/core/world.js";
import { seatsHeldBy, serverContext, type LiveRoom, type ScreenedJoin, type ServerContext } from "../context.js";
import type { RoomSummary, RoomType } from "../protocol.js";
import { refusalOutcome, type ReservationOutcome, type SeatReservation } from "../group/group-rooms.js";
import { clientAddress } from "../security/client-address.js";
import { addressKey, Refused, seatKey, waitText } from "../security/client-guard.js";
import { PathShower } from "../security/public-run.js";
import type { RestoreInfo } from "../room-registry.js";
import type { RoomEntry } from "../../store/room-registry.js";
import type { RunRecord } from "../../store/run-store.js";
import { takeOverLog } from "../../store/episode-log.js";
import { fenced, writesHeld } from "../../store/write-fence.js";
import { C2S, S2C, type ActionResultMessage, type SeatMessage, type TurnMessage, type TurnOverMessage } from "../protocol.js";
import { HumanTurns, type PendingTurn } from "./human-turns.js";
import { malformedFrame } from "./malformed-frame.js";
import { ActMessageSchema, describeIssues, JoinOptionsSchema } from "./options.js";
import { sameSecret } from "../secret.js";
import { SERVER_INSTANCE } from "../security/open-quizzes.js";
import { Perspective, perspectiveStep, pushBounded, RoomState, Seat, tickNow, WORLD_PERSPECTIVE } from "./state.js";

/** The longest timeline and perspective history a client is sent (older timesteps are in the run's log). */
const MAX_HISTORY = 1000;
/** Structured observations beyond this many characters are not sent (the text always is). */
const MAX_DATA_CHARS = 16_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyWorld = World<any, any, any>;

/** Errors that mean the request was bad (the API answers them with 400). */
const CLIENT_ERRORS = new Set(["OptionsError", "DataError", "DataPathError"]);

type JoinAuth = { role: "spectator"; name: string } | { role: "seat"; index: number; token: string; name: string };

/** A reservation made and not used yet (Colyseus drops it after seatReservationTimeout). */
interface Pending {
  readonly address: string;
  readonly join: ScreenedJoin;
  readonly expires: number;
}

interface Holder {
  sessionId: string;
  token: string;
  name: string;
  /** Where the person connected from (seats per address are capped). */
  address: string;
  /** The seat is a position: when a looping room starts a new story, its holder plays the agent at the same place. */
  index: number;
  client: Client;
  connected: boolean;
}

export function newToken(): string {
  return randomBytes(18).toString("base64url");
}

export abstract class BaseRoom extends Room<{ state: RoomState }> implements LiveRoom {
  protected readonly ctx: ServerContext = serverContext();
  protected readonly abort = new AbortController();
  protected readonly createdAt = new Date();
  /** Server paths as clients may see them (from the store or a data folder, never absolute). */
  protected readonly paths = new PathShower(this.ctx.store.root, this.ctx.dataRoots);
  /** Shared by every spectator: encoded once per patch however many spectators watch. */
  private readonly spectatorView = new StateView();
  private readonly holders = new Map<string, Holder>();
  /** Private rooms: each seat a person may take has a token issued at creation. */
  private readonly seatTokens = new Map<number, string>();
  private spectatorToken: string | undefined;
  /** Reservations not used yet, by session id. */
  private readonly pending = new Map<string, Pending>();
  /** When each client was last told it sends too much (one notice a second, not one per message). */
  private readonly noticed = new WeakMap<Client, number>();
  protected reconnectSeconds = 60;
  /** Set when this room replaces one of a server that is gone (room-registry.ts): its id, run, tokens and progress. */
  protected restoring: RestoreInfo | undefined;
  /** The world being played and its current state (what a person's action is checked against). */
  protected world: AnyWorld | undefined;
  protected current: unknown;
  protected turns: HumanTurns<unknown, unknown> | undefined;
  /** How each pending or finished human turn of this timestep ended, by agent ("human" or "fallback"). */
  protected readonly humanOutcomes = new Map<string, { timestep: number; source: "human" | "fallback" }>();
  private readonly schemaJson = new WeakMap<object, unknown>();

  protected abstract readonly roomType: RoomType;

  // ---- set-up -------------------------------------------------------------------------------

  /** Common set-up; subclasses call it first in onCreate. */
  protected setUp(opts: { private: boolean; reconnectSeconds: number; title: string; world: string; tickMs: number; turnDeadlineMs: number }, state: RoomState = new RoomState()): void {
    state.kind = this.roomType;
    state.title = opts.title;
    state.world = opts.world;
    state.status = "starting";
    state.note = "";
    state.visibility = opts.private ? "private" : "public";
    state.runId = "";
    state.episode = 0;
    state.seed = "";
    state.tickMs = opts.tickMs;
    state.turnDeadlineMs = opts.turnDeadlineMs;
    this.setState(state);
    this.reconnectSeconds = opts.reconnectSeconds;
    if (opts.private) this.spectatorToken = this.restoring?.secrets?.spectatorToken ?? newToken();
    this.autoDispose = false;
    // Colyseus locks a room whose clients and reservations reach maxClients, seats included: a
    // flood of reservations locked people out of their seats. Spectators are capped at
    // reservation time instead (screenReservation), and seats never wait for room.
    this.maxClients = Infinity;
    // Messages are limited per address and seat token across reconnections (_onMessage below),
    // not per connection, which a client sheds by reconnecting.
    this.maxMessagesPerSecond = Infinity;

    this.onMessage(C2S.act, (client, message: unknown) => this.onAct(client, message));
    this.onMessage(C2S.quizAnswer, (client, message: unknown) => this.onQuizAnswer(client, message));
    this.onMessage("*", (client, type: unknown) => {
      client.send(S2C.error, { error: `unknown message type "${String(type)}" (this room accepts: ${this.messageTypes().join(", ")})` });
    });
  }

  /** The message types this room accepts (a room kind with messages of its own adds them). */
  protected messageTypes(): readonly string[] {
    return Object.values(C2S);
  }

  /** Whether a seat gets a perspective of its own, filled every timestep (a room of a thousand users keeps them for its people's seats only). */
  protected hasPerspective(_seat: { agent: string; controller: string; human: boolean }): boolean {
    return true;
  }

  /** Synchronized objects of a room kind's own that the holder of `agent`'s seat sees besides its perspective (a social room: the user's feed). */
  protected seatObjects(_agent: string): readonly object[] {
    return [];
  }

  /** Makes a synchronized object visible to every spectator (the shared view); seated clients do not see it. */
  protected showSpectators(obj: object): void {
    this.spectatorView.add(obj as Parameters<StateView["add"]>[0]);
  }

  /** The agent whose seat this client holds ("" for a seat without an agent in this episode), or undefined for a spectator. */
  protected seatOf(client: Client): string | undefined {
    const h = this.holders.get(client.sessionId);
    return h ? (this.state.agents[h.index] ?? "") : undefined;
  }

  /** Lists the room (REST API, lobby): the last step of a successful onCreate. */
  protected register(): void {
    this.ctx.rooms.set(this.roomId, this);
    // In a group, other processes find the room of a run by its listing (group/group-rooms.ts).
    if (this.ctx.group && this.state.runId) void this.setMetadata({ runId: this.state.runId }, false);
    // A private room's run streams its progress only to holders of its tokens (progress-hub.ts).
    if (this.state.visibility === "private" && this.state.runId) this.ctx.hub.restrict(this.state.runId, (token) => this.opens(token));
  }

  /** Whether `token` is one this private room handed out (its spectator token or a seat token). */
  private opens(token: string): boolean {
    if (sameSecret(token, this.spectatorToken)) return true;
    for (const t of this.seatTokens.values()) if (sameSecret(token, t)) return true;
    return false;
  }

  /** Issues a token for every seat a person may take now (private rooms: given to whoever created the room). */
  protected issueSeatTokens(humanIndexes: readonly number[]): void {
    if (this.state.visibility !== "private") return;
    const restored = this.restoring?.secrets?.seatTokens ?? [];
    for (const i of humanIndexes) if (!this.seatTokens.has(i)) this.seatTokens.set(i, restored.find((t) => t.index === i)?.token ?? newToken());
  }

  /** What the room registry keeps of a room the API created, to bring it back after a restart. */
  registryEntry(): Omit<RoomEntry, "owner"> {
    const secrets = this.secrets();
    return {
      roomId: this.roomId,
      type: this.roomType as RoomEntry["type"],
      options: this.resolvedOptions(),
      createdAt: this.createdAt.toISOString(),
      ...(this.state.runId ? { runId: this.state.runId } : {}),
      ...(this.state.visibility === "private" ? { secrets: { ...(secrets.spectatorToken ? { spectatorToken: secrets.spectatorToken } : {}), seatTokens: secrets.seatTokens.map(({ index, token }) => ({ index, token })) } } : {}),
    };
  }

  /**
   * A restored room's log, taken up as a new file before it is read (takeOverLog): in a group,
   * the process that played it before may be paused, not dead, and what it writes on waking must
   * not follow what is read here. Once this process holds its place: the copy is a write of the
   * store. A process alone has no such writer: its logs are left as they are.
   */
  protected async takeOverRunLog(path: string): Promise<void> {
    if (!fenced()) return;
    await writesHeld();
    takeOverLog(path);
  }

  /** A restored room's run, running again (its log keeps what was played before the restart). */
  protected async reopenRun(): Promise<RunRecord | undefined> {
    const id = this.restoring?.runId;
    if (!id || !this.ctx.store.get(id)) return undefined;
    return this.ctx.store.update(id, { status: "running" });
  }

  /** The room's options as it resolved them (seeds it drew included): what a restart recreates it from. */
  protected abstract resolvedOptions(): Record<string, unknown>;

  /** The secrets a private room's creator receives. */
  secrets(): { spectatorToken?: string; seatTokens: { index: number; agent: string; token: string }[] } {
    return {
      ...(this.spectatorToken ? { spectatorToken: this.spectatorToken } : {}),
      seatTokens: [...this.seatTokens].map(([index, token]) => ({ index, agent: this.state.agents[index] ?? "", token })),
    };
  }

  // ---- seats and perspectives -----------------------------------------------------------------

  /**
   * A new episode's agents: fresh seats and perspectives. People keep their place: the holder of
   * seat i now plays agent i (a looping room's stories have new characters).
   */
  protected setAgents(world: AnyWorld, initialState: unknown, seats: readonly { agent: string; controller: string; human: boolean }[]): void {
    this.turns?.closeAll();
    this.world = world;
    this.current = initialState;
    this.humanOutcomes.clear();
    this.turns = new HumanTurns<unknown, unknown>(
      world,
      () => this.current,
      {
        opened: (p) => this.turnOpened(p),
        closed: (p, outcome) => this.turnClosed(p, outcome),
      },
      (state, agent, action) => this.personCheck(state, agent, action),
    );
    const state = this.state;
    state.agents.clear();
    state.seats.clear();
    state.perspectives.clear();
    state.timeline.clear();
    const all = [WORLD_PERSPECTIVE, ...seats.filter((s) => this.hasPerspective(s)).map((s) => s.agent)];
    for (const name of all) {
      const p = new Perspective();
      p.name = name;
      state.perspectives.set(name, p);
      this.spectatorView.add(p);
    }
    seats.forEach((s) => {
      state.agents.push(s.agent);
      const seat = new Seat();
      seat.agent = s.agent;
      seat.controller = s.controller;
      seat.human = s.human;
      seat.occupant = "";
      seat.connected = false;
      seat.waiting = false;
      seat.deadline = 0;
      state.seats.set(s.agent, seat);
    });
    for (const h of this.holders.values()) this.placeHolder(h);
  }

  /** Shows the holder its seat's perspective and tells it which agent it plays now. */
  private placeHolder(h: Holder): void {
    const agent = this.state.agents[h.index];
    const seat = agent === undefined ? undefined : this.state.seats.get(agent);
    if (agent !== undefined && seat?.human) {
      seat.occupant = h.name;
      seat.connected = h.connected;
      const p = this.state.perspectives.get(agent);
      if (p) h.client.view?.add(p);
      for (const o of this.seatObjects(agent)) h.client.view?.add(o as Parameters<StateView["add"]>[0]);
    }
    const msg: SeatMessage = { agent: seat?.human ? agent! : "", token: h.token, roomId: this.roomId };
    if (h.connected) h.client.send(S2C.seat, msg);
  }

  /** The person holding `agent`'s seat (connected or not). */
  protected personIn(agent: string): string | undefined {
    const index = this.state.agents.indexOf(agent);
    if (index < 0 || !this.state.seats.get(agent)?.human) return undefined;
    for (const h of this.holders.values()) if (h.index === index) return h.name;
    return undefined;
  }

  /** A person holds `agent`'s seat and is connected now. */
  protected seatConnected(agent: string): boolean {
    return this.holderOf(agent)?.connected ?? false;
  }

  protected holderOf(agent: string): Holder | undefined {
    const index = this.state.agents.indexOf(agent);
    for (const h of this.holders.values()) if (h.index === index) return h;
    return undefined;
  }

  protected awaitPerson(turn: AgentTurn<unknown>, person: string): Promise<AgentReply<unknown>> {
    if (!this.turns) return Promise.reject(new Error("no episode"));
    return this.turns.await(turn, person, this.turnNumber(turn));
  }

  /** The number a person's turn is known by (the timestep; a benchmark room numbers its questions). */
  protected turnNumber(turn: AgentTurn<unknown>): number {
    return turn.timestep;
  }

  private turnOpened(p: PendingTurn<unknown>): void {
    const seat = this.state.seats.get(p.agent);
    if (seat) {
      seat.waiting = true;
      seat.deadline = p.turn.deadline ?? 0;
    }
    const h = this.holderOf(p.agent);
    if (h?.connected) h.client.send(S2C.turn, this.turnMessage(p));
    this.broadcastPatch();
  }

  private turnClosed(p: PendingTurn<unknown>, outcome: "human" | "timeout" | "ended"): void {
    const seat = this.state.seats.get(p.agent);
    if (seat) {
      seat.waiting = false;
      seat.deadline = 0;
    }
    this.humanOutcomes.set(p.agent, { timestep: p.timestep, source: outcome === "human" ? "human" : "fallback" });
    const h = this.holderOf(p.agent);
    const msg: TurnOverMessage = { agent: p.agent, timestep: p.timestep, outcome };
    if (h?.connected) h.client.send(S2C.turnOver, msg);
  }

  /** Why this room refuses a person's `action` beyond the world's rules (none by default). */
  protected personCheck(_state: unknown, _agent: string, _action: unknown): string | undefined {
    return undefined;
  }

  private turnMessage(p: PendingTurn<unknown>): TurnMessage {
    const turn = p.turn;
    const world = this.world!;
    let schema = this.schemaJson.get(turn.actionSchema);
    if (schema === undefined) {
      schema = z.toJSONSchema(turn.actionSchema, { io: "input", unrepresentable: "any" });
      this.schemaJson.set(turn.actionSchema, schema);
    }
    return {
      agent: p.agent,
      timestep: p.timestep,
      observation: {
        text: turn.observation.text,
        sameAsState: turn.observation.sameAsState ?? false,
        ...(turn.observation.data !== undefined ? { data: this.shownData(turn.observation.data) } : {}),
      },
      mentalState: world.mentalState?.(this.current, p.agent) ?? "",
      actionSchema: schema,
      ...(turn.options ? { options: turn.options } : {}),
      noop: world.noop(this.current, p.agent),
      ...(turn.deadline !== undefined ? { deadline: turn.deadline } : {}),
    };
  }

  /** An observation's structured data as the seat's person is sent it (a benchmark room hides its item ids). */
  protected shownData(data: unknown): unknown {
    return data;
  }

  /** Who produced each agent's action at `timestep`: the person, the fallback, or the controller. */
  protected sourcesAt(timestep: number, agents: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const a of agents) {
      const h = this.humanOutcomes.get(a);
      out[a] = h && h.timestep === timestep ? h.source : "agent";
    }
    return out;
  }

  /** Appends a recorded timestep: the public tick, the world's view, and each agent's own view. */
  /**
   * `leaks`: the live audit's findings in this timestep's actions (JSON), shown with the world's
   * step; `view`: what the world's spectators plot after it (World.view), its data.
   */
  protected recordTimestep(rec: TimestepRecord, sources: Readonly<Record<string, string>>, leaks = "", view?: unknown): void {
    const state = this.state;
    pushBounded(state.timeline, tickNow(rec.timestep), MAX_HISTORY);
    const world = perspectiveStep({ timestep: rec.timestep, text: rec.state, sameAsState: true, leaks, ...(view !== undefined && view !== null ? { data: JSON.stringify(view) } : {}) });
    pushBounded(state.perspectives.get(WORLD_PERSPECTIVE)?.steps, world, MAX_HISTORY);
    for (const a of [...state.agents]) {
      const steps = state.perspectives.get(a)?.steps;
      if (!steps) continue;
      const obs = rec.observations[a];
      const step = perspectiveStep({
        timestep: rec.timestep,
        text: obs?.text ?? "",
        sameAsState: obs?.sameAsState ?? false,
        mentalState: rec.mentalStates[a] ?? "",
        action: rec.actions[a] ?? "none",
        source: sources[a] ?? "agent",
        data: dataJson(obs?.data),
      });
      pushBounded(steps, step, MAX_HISTORY);
    }
    // Send now rather than at the next patch interval: the timestep is what clients wait for.
    this.broadcastPatch();
  }

  protected setStatus(status: string, note = ""): void {
    this.state.status = status;
    // Everyone reads the note: an error naming a file names it without the server's folders.
    this.state.note = this.paths.text(note);
  }

  // ---- joining ------------------------------------------------------------------------------

  /**
   * Checked twice with the same options: when the seat is reserved (matchmake-gate.ts), so that
   * nothing is reserved for a client that may not join, and when the client connects.
   */
  override onAuth(client: Client, raw: unknown): JoinAuth & { address: string } {
    const auth = this.authorize(raw);
    const reservation = this.pending.get(client.sessionId);
    this.pending.delete(client.sessionId);
    const address = reservation?.address ?? clientAddress(client);
    if (auth.role === "seat") {
      const blocked = this.ctx.guard.penalties.check(seatKey(auth.token), addressKey(address));
      if (!blocked.ok) throw new ServerError(ErrorCode.AUTH_FAILED, `too many messages from this seat: wait ${waitText(blocked.retryAfterMs)}`);
    }
    return { ...auth, address };
  }

  screenReservation(raw: unknown, address: string, seatsElsewhere = 0): ScreenedJoin & { hold: string } {
    const join = this.screen(raw, address, seatsElsewhere);
    // Held from now, not from when the reservation is made: concurrent requests count each other.
    const hold = `hold:${newToken()}`;
    this.pending.set(hold, { address, join, expires: Date.now() + this.seatReservationTimeout * 1000 });
    return { ...join, hold };
  }

  reserved(hold: string, sessionId: string | undefined): void {
    const p = this.pending.get(hold);
    this.pending.delete(hold);
    if (p && sessionId !== undefined) this.pending.set(sessionId, p);
  }

  /**
   * Screens and reserves, for the matchmaking gate of any process of the group (it may be called
   * from another one: group/group-rooms.ts); a refusal comes back as a value.
   */
  async reserveScreened(options: Record<string, unknown>, address: string): Promise<ReservationOutcome> {
    // In a group, the seats the address holds in the other processes count too (its Redis unreachable: none).
    const shared = this.state.visibility === "public" ? this.ctx.guard.shared : undefined;
    const elsewhere = shared ? await shared.seatsElsewhere(address).catch(() => 0) : 0;
    let hold: string;
    try {
      hold = this.screenReservation(options, address, elsewhere).hold;
    } catch (err) {
      return refusalOutcome(err);
    }
    let reservation: SeatReservation | undefined;
    try {
      reservation = (await matchMaker.joinById(this.roomId, options)) as SeatReservation;
      return { ok: true, reservation };
    } catch (err) {
      return refusalOutcome(err);
    } finally {
      this.reserved(hold, reservation?.sessionId);
      // Before the client has its answer: its next request, to any process, sees this seat.
      if (shared && reservation) await shared.seatsChanged(address).catch(() => undefined);
    }
  }

  /**
   * A room the API created is kept in the store's room registry, by the process that hosts it
   * (called from any process of the group): what its creator receives.
   */
  async keep(): Promise<RoomSummary & ReturnType<BaseRoom["secrets"]>> {
    await this.ctx.persisted.add(this.registryEntry());
    return { ...this.summary(), ...this.secrets() };
  }

  private screen(raw: unknown, address: string, seatsElsewhere: number): ScreenedJoin {
    const auth = this.authorize(raw);
    const now = Date.now();
    for (const [id, p] of this.pending) if (p.expires <= now) this.pending.delete(id);
    let mine = 0;
    let spectatorsWaiting = 0;
    for (const p of this.pending.values()) {
      if (p.address === address) mine++;
      if (p.join.role === "spectator") spectatorsWaiting++;
    }
    const limits = this.ctx.guard.limits;
    if (mine >= limits.pendingPerAddress) {
      throw new Refused(429, `your address holds ${mine} reservations of this room it has not used: connect with them, or wait until they expire (${this.seatReservationTimeout} s)`, this.seatReservationTimeout * 1000);
    }
    if (auth.role === "spectator") {
      const seated = [...this.holders.values()].filter((h) => h.connected).length;
      if (this.clients.length - seated + spectatorsWaiting >= limits.spectatorsPerRoom) {
        throw new Refused(503, `this room has as many spectators as it takes (${limits.spectatorsPerRoom}); try again later`, 10_000);
      }
      return { role: "spectator" };
    }
    const blocked = this.ctx.guard.penalties.check(seatKey(auth.token));
    if (!blocked.ok) throw new Refused(429, `too many messages from this seat: wait ${waitText(blocked.retryAfterMs)}`, blocked.retryAfterMs);
    // Coming back to one's own seat takes no new one; a public room's new seat counts against the address.
    const own = [...this.holders.values()].some((h) => h.index === auth.index && sameSecret(h.token, auth.token));
    if (!own && this.state.visibility === "public") {
      const held = seatsHeldBy(this.ctx, address) + seatsElsewhere;
      if (held >= limits.seatsPerAddress) {
        throw new Refused(429, `your address holds ${held} seats already (at most ${limits.seatsPerAddress} at once): leave one first`);
      }
    }
    return { role: "seat", index: auth.index };
  }

  seatsHeldBy(address: string): number {
    if (this.state.visibility !== "public") return 0;
    const now = Date.now();
    let n = 0;
    for (const h of this.holders.values()) if (h.address === address) n++;
    for (const p of this.pending.values()) if (p.address === address && p.join.role === "seat" && p.expires > now) n++;
    return n;
  }

  /** Who may join with these options: a spectator, or a seat's holder (with its token). */
  private authorize(raw: unknown): JoinAuth {
    const parsed = JoinOptionsSchema.safeParse(raw ?? {});
    if (!parsed.success) throw new ServerError(ErrorCode.AUTH_FAILED, `bad join options: ${describeIssues(parsed.error)}`);
    let { seat } = parsed.data;
    const { token } = parsed.data;
    const name = parsed.data.name ?? "anonymous";
    const isPrivate = this.state.visibility === "private";

    if (seat === undefined) {
      if (token === undefined) {
        if (isPrivate) throw new ServerError(ErrorCode.AUTH_FAILED, "this room is private: join with its spectator token or a seat token");
        return { role: "spectator", name };
      }
      if (isPrivate && sameSecret(token, this.spectatorToken)) return { role: "spectator", name };
      const index = this.seatOfToken(token);
      if (index === undefined) throw new ServerError(ErrorCode.AUTH_FAILED, "unknown or expired token");
      return { role: "seat", index, token, name };
    }

    // A seat by its agent's name, or by its 0-based position: a looping room's agents change with
    // every story, and a position names the same seat throughout (as humanSeats does).
    const byName = this.state.agents.indexOf(seat);
    const index = byName < 0 && /^\d{1,3}$/.test(seat) && Number(seat) < this.state.agents.length ? Number(seat) : byName;
    if (index < 0) {
      throw new ServerError(ErrorCode.AUTH_FAILED, `no agent "${seat}" in this room (agents: ${[...this.state.agents].join(", ") || "none yet"}; or a seat's 0-based position)`);
    }
    seat = this.state.agents[index]!;
    if (!this.state.seats.get(seat)?.human) {
      const open = [...this.state.seats.values()].filter((s) => s.human).map((s) => s.agent);
      throw new ServerError(ErrorCode.AUTH_FAILED, `${seat}'s seat is not open to people (open seats: ${open.join(", ") || "none"})`);
    }
    if (isPrivate) {
      if (!sameSecret(token, this.seatTokens.get(index))) throw new ServerError(ErrorCode.AUTH_FAILED, `${seat}'s seat needs its seat token`);
      return { role: "seat", index, token: token!, name };
    }
    const holder = [...this.holders.values()].find((h) => h.index === index);
    if (holder) {
      if (!sameSecret(token, holder.token)) throw new ServerError(ErrorCode.AUTH_FAILED, `${seat}'s seat is taken by ${holder.name}`);
      return { role: "seat", index, token: holder.token, name };
    }
    return { role: "seat", index, token: newToken(), name };
  }

  private seatOfToken(token: string): number | undefined {
    for (const [index, t] of this.seatTokens) if (sameSecret(token, t)) return index;
    for (const h of this.holders.values()) if (sameSecret(token, h.token)) return h.index;
    return undefined;
  }

  override onJoin(client: Client, _options: unknown, auth: JoinAuth & { address: string }): void {
    if (auth.role === "spectator") {
      client.view = this.spectatorView;
      return;
    }
    const existing = [...this.holders.values()].find((h) => h.index === auth.index);
    if (existing) {
      // Someone else got here first (two claims at once), or the same person from a new connection.
      if (!sameSecret(existing.token, auth.token)) throw new ServerError(ErrorCode.AUTH_FAILED, "the seat was just taken");
      this.holders.delete(existing.sessionId);
      existing.client.view?.dispose();
      existing.client.leave(CloseCode.CONSENTED, "the seat was taken over by a new connection");
    }
    client.view = new StateView();
    const holder: Holder = { sessionId: client.sessionId, token: auth.token, name: auth.name, address: auth.address, index: auth.index, client, connected: true };
    this.holders.set(client.sessionId, holder);
    this.placeHolder(holder);
    this.resendTurn(holder);
  }

  private resendTurn(h: Holder): void {
    const agent = this.state.agents[h.index];
    const p = agent === undefined ? undefined : this.turns?.pending(agent);
    if (p && h.connected) h.client.send(S2C.turn, this.turnMessage(p));
    if (agent !== undefined && h.connected) this.seatBack(agent, h.token);
  }

  /**
   * A person is back in `agent`'s seat: reconnected, or the same seat token on a new connection
   * (`token`: the seat token it holds the seat with). A subclass sends again what it still waits
   * for from that person.
   */
  protected seatBack(_agent: string, _token: string): void {}

  override onDrop(client: Client): void {
    const h = this.holders.get(client.sessionId);
    if (!h) return;
    h.connected = false;
    const agent = this.state.agents[h.index];
    const seat = agent === undefined ? undefined : this.state.seats.get(agent);
    if (seat) seat.connected = false;
    // The seat is kept (turns time out to the controller meanwhile) until the person comes back.
    if (this.reconnectSeconds > 0 && !this.abort.signal.aborted) {
      // Rejected when the time is up or the room goes away: then onLeave releases the seat. The
      // deadline is this room's timer, not Colyseus's: Colyseus (0.18) forgets to clear its own
      // when the room goes away first, and that timer kept a stopped server's process alive for
      // the rest of the window (up to reconnectSeconds after "every log is flushed").
      const reconnection = this.allowReconnection(client, "manual");
      const deadline = setTimeout(() => reconnection.reject(new Error("the reconnection window is over")), this.reconnectSeconds * 1000);
      reconnection.then(
        () => clearTimeout(deadline),
        () => clearTimeout(deadline),
      );
    }
  }

  override onReconnect(client: Client): void {
    const h = this.holders.get(client.sessionId);
    if (!h) {
      // The seat was taken over while this connection was away.
      client.leave(CloseCode.CONSENTED, "the seat was taken over by a new connection");
      return;
    }
    const blocked = this.ctx.guard.penalties.check(seatKey(h.token), addressKey(clientAddress(client)));
    if (!blocked.ok) {
      client.error(ErrorCode.APPLICATION_ERROR, `too many messages from this seat: wait ${waitText(blocked.retryAfterMs)}`);
      client.leave(CloseCode.WITH_ERROR);
      return;
    }
    h.client = client;
    h.connected = true;
    this.placeHolder(h);
    this.resendTurn(h);
  }

  override onLeave(client: Client): void {
    const h = this.holders.get(client.sessionId);
    if (!h) return;
    this.holders.delete(client.sessionId);
    client.view?.dispose();
    const agent = this.state.agents[h.index];
    const seat = agent === undefined ? undefined : this.state.seats.get(agent);
    if (seat && agent !== undefined) {
      seat.occupant = "";
      seat.connected = false;
      // Nobody will answer: the controller acts now instead of at the deadline.
      this.turns?.close(agent, "ended");
    }
  }

  // ---- messages -----------------------------------------------------------------------------

  private onAct(client: Client, message: unknown): void {
    const reply = (r: ActionResultMessage) => client.send(S2C.actionResult, r);
    const h = this.holders.get(client.sessionId);
    if (!h) return reply({ ok: false, error: "only a seated client can act (join with the seat option)" });
    const parsed = ActMessageSchema.safeParse(message);
    if (!parsed.success) return reply({ ok: false, error: `bad act message: ${describeIssues(parsed.error)}` });
    const agent = this.state.agents[h.index];
    if (agent === undefined || !this.turns) return reply({ ok: false, error: "your seat has no agent in this episode" });
    reply(this.turns.submit(agent, parsed.data.action, parsed.data.timestep));
  }

  /** A seated person's quiz answer; a room that asks no quiz says so. */
  protected onQuizAnswer(client: Client, _message: unknown): void {
    client.send(S2C.quizAnswerResult, { ok: false, error: "this room asks no quiz" });
  }

  /** The agent whose seat `client` holds, if it holds one. */
  protected seatAgentOf(client: Client): string | undefined {
    const h = this.holders.get(client.sessionId);
    return h ? this.state.agents[h.index] : undefined;
  }

  /** Sends `message` to the person in `agent`'s seat alone (false when nobody connected holds it). */
  protected sendToSeat(agent: string, type: string, message: unknown): boolean {
    const h = this.holderOf(agent);
    if (!h?.connected) return false;
    h.client.send(type, message);
    return true;
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  override onUncaughtException(error: Error & { code?: number }, method: string): void {
    // A refused join, or options or data refused at creation, are answers to a client, not server errors.
    if ((method === "onAuth" || method === "onJoin") && error.cause instanceof ServerError) return;
    if (method === "onCreate" && (error.cause instanceof ServerError || CLIENT_ERRORS.has((error.cause as Error | undefined)?.name ?? ""))) return;
    console.error(`[room ${this.roomId} ${this.roomType}] ${method}: ${error.stack ?? error.message}`);
  }

  /**
   * Whether a frame from `client` is within its address's and its seat's rates (client-guard.ts).
   * Past them it is dropped (with one notice a second); a client that keeps on is cut off and its
   * address and seat token back off before they may join or reconnect again. The seat is kept for
   * its person, as for a dropped connection.
   */
  admitMessage(client: Client): boolean {
    const seatToken = this.holders.get(client.sessionId)?.token;
    const verdict = this.ctx.guard.message(clientAddress(client), seatToken);
    if (verdict.kind === "ok") return true;
    if (verdict.kind === "cut") {
      client.error(ErrorCode.APPLICATION_ERROR, `too many messages: cut off; wait ${waitText(verdict.blockedMs)} before joining again`);
      client.leave(CloseCode.WITH_ERROR);
      return false;
    }
    const now = Date.now();
    if (now - (this.noticed.get(client) ?? 0) >= 1000) {
      this.noticed.set(client, now);
      client.send(S2C.error, { error: `too many messages: this one was dropped; send again in ${waitText(verdict.retryAfterMs)}` });
    }
    return false;
  }

  summary(): RoomSummary {
    const s = this.state;
    const seated = [...this.holders.values()].filter((h) => h.connected).length;
    const last = s.timeline.length ? s.timeline[s.timeline.length - 1]!.timestep : 0;
    return {
      roomId: this.roomId,
      type: this.roomType,
      title: s.title,
      world: s.world,
      status: s.status,
      note: s.note,
      visibility: s.visibility === "private" ? "private" : "public",
      runId: s.runId,
      episode: s.episode,
      timestep: last,
      spectators: Math.max(0, this.clients.length - seated),
      seats: [...s.agents].map((agent) => {
        const seat = s.seats.get(agent);
        const occupied = (seat?.occupant ?? "") !== "";
        return { agent, controller: seat?.controller ?? "", human: seat?.human ?? false, occupied, connected: occupied && (seat?.connected ?? false) };
      }),
      ...(s.kind === "benchmark" && s.progress ? { progress: { done: s.progress.done, total: s.progress.total, correct: s.progress.correct } } : {}),
      createdAt: this.createdAt.toISOString(),
    };
  }

  /** The episode the room plays, and the server instance that opens its quizzes (security/open-quizzes.ts). */
  quizView(): { episode: number; server: string } {
    return { episode: this.state.episode, server: SERVER_INSTANCE };
  }

  async stop(reason: string): Promise<void> {
    if (!this.abort.signal.aborted) {
      this.setStatus("stopped", reason);
      this.abort.abort();
    }
    await this.disconnect(CloseCode.CONSENTED);
  }

  /** Subclasses finish their run (flush logs) here; it is awaited before the room goes away. */
  protected abstract finish(): Promise<void>;

  /** Builds the room from its options (the subclass's part of onCreate). */
  protected abstract create(raw: unknown): Promise<void>;

  /**
   * Options or data a room refuses are the client's error: they go back as a ServerError, which
   * Colyseus answers without printing a stack trace to the server's log (it printed one for every
   * bad request). Anything else is the server's error, and is printed.
   */
  override async onCreate(raw: unknown): Promise<void> {
    this.restoring = this.ctx.persisted.claim(raw);
    // Colyseus lists the room under the id it has when onCreate returns.
    if (this.restoring) this.roomId = this.restoring.roomId;
    try {
      await this.create(raw);
    } catch (err) {
      if (this.restoring) this.ctx.persisted.restoreFailed(this.restoring, err);
      if (err instanceof Error && CLIENT_ERRORS.has(err.name)) throw new ServerError(ErrorCode.APPLICATION_ERROR, err.message);
      throw err;
    }
  }

  override async onDispose(): Promise<void> {
    this.abort.abort();
    this.turns?.closeAll();
    clearReservationTimers(this);
    try {
      await this.finish();
    } finally {
      this.ctx.rooms.delete(this.roomId);
      this.ctx.persisted.forget(this.roomId);
      // (A room whose options were refused has no state.)
      const state = this.state as RoomState | undefined;
      if (state?.visibility === "private" && state.runId) this.ctx.hub.release(state.runId);
      this.spectatorView.dispose();
    }
  }
}

/**
 * Every frame a client sends reaches Colyseus's Room._onMessage (private in its types, hence the
 * cast): a message whose payload does not decode is answered here with an error frame and the
 * connection closed, as Colyseus closes it, without the stack trace Colyseus prints
 * (malformed-frame.ts). Colyseus replacing the method would bring the stack traces back, which
 * test/server/ws-protocol-errors.test.ts would say.
 */
type OnMessage = (this: Room, client: Client, frame: Uint8Array) => void;
const colyseusOnMessage = (Room.prototype as unknown as { _onMessage: OnMessage })._onMessage;
(BaseRoom.prototype as unknown as { _onMessage: OnMessage })._onMessage = function (client, frame) {
  if (!(this as BaseRoom).admitMessage(client)) return;
  const problem = frame instanceof Uint8Array && frame.byteLength > 0 ? malformedFrame(frame) : undefined;
  if (problem === undefined) return colyseusOnMessage.call(this, client, frame);
  client.error(ErrorCode.INVALID_PAYLOAD, `malformed message: ${problem}`);
  client.leave(CloseCode.WITH_ERROR);
};

/**
 * A seat reserved by matchmaking (`joinById`) expires after Colyseus's seatReservationTimeout
 * (15 s) unless its client connects. Colyseus (0.18) does not clear that timer when the room goes
 * away, so a server stopped after a reservation its client never used ran on for the rest of it
 * after "every log is flushed". The field is Colyseus's private one: if it goes, this does nothing
 * and test/server/stop-promptly.test.ts says so.
 */
function clearReservationTimers(room: Room): void {
  const timers = (room as unknown as { _reservedSeatTimeouts?: Record<string, ReturnType<typeof setTimeout>> })._reservedSeatTimeouts;
  for (const timer of Object.values(timers ?? {})) clearTimeout(timer);
}

function dataJson(data: unknown): string {
  if (data === undefined) return "";
  try {
    const s = JSON.stringify(data);
    return s.length > MAX_DATA_CHARS ? "" : s;
  } catch {
    return "";
  }
}
