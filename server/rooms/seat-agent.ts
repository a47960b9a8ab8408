/**
 * The agent in a seat of a room: the person who holds the seat when there is one, else the seat's
 * controller (a story's script, an agent from the registry, or nothing). The game loop sees one
 * agent per seat and never needs to know who is playing it.
 */
import type { Agent, AgentReply, AgentTurn } from "../../worlds/core/agent.js";

export interface SeatHost<A> {
  /** The person holding `agent`'s seat, if any (connected or waiting to reconnect). */
  personIn(agent: string): string | undefined;
  /** Waits for the person's valid action (rejects at the deadline). */
  awaitPerson(turn: AgentTurn<A>, person: string): Promise<AgentReply<A>>;
  noop(agent: string): A;
}

export class SeatAgent<A> implements Agent<A> {
  readonly id: string;

  constructor(
    readonly agent: string,
    /** Plays the seat when no person does; undefined: the seat does nothing then. */
    readonly controller: Agent<A> | undefined,
    private readonly host: SeatHost<A>,
    /** How logs name who plays the seat (a human baseline: "human:NAME"); default the controller's id. */
    id?: string,
  ) {
    this.id = id ?? controller?.id ?? "none";
  }

  /** A person's actions are always validated; the controller's only when it is not trusted. */
  get trusted(): boolean {
    // An agent that does not say it is trusted is not: it is checked, and given the list of valid
    // actions (the random baseline needs it). No controller plays the world's own no-op.
    return this.host.personIn(this.agent) === undefined && (this.controller === undefined || this.controller.trusted === true);
  }

  act(turn: AgentTurn<A>): AgentReply<A> | Promise<AgentReply<A>> {
    const person = this.host.personIn(this.agent);
    if (person !== undefined) return this.host.awaitPerson(turn, person);
    if (this.controller) return this.controller.act(turn);
    return { action: this.host.noop(this.agent) };
  }
}

/** The loop's fallback: the seat's controller acts when the person (or the controller itself) fails. */
export class ControllerFallback<A> implements Agent<A> {
  readonly id = "fallback";

  constructor(
    private readonly controllers: ReadonlyMap<string, Agent<A> | undefined>,
    private readonly noop: (agent: string) => A,
  ) {}

  act(turn: AgentTurn<A>): AgentReply<A> | Promise<AgentReply<A>> {
    const c = this.controllers.get(turn.agent);
    return c ? c.act(turn) : { action: this.noop(turn.agent) };
  }
}
