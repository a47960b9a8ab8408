/**
 * The turns people owe the world. When the game loop asks a seat held by a person, a pending turn
 * is opened and the person is told (observation, action schema, deadline). A submitted action is
 * checked against the action schema and the current state before it is taken: an invalid one is
 * answered with the reason and changes nothing, and the person may try again until the deadline.
 * When the loop's deadline passes (or the episode ends) the turn is closed and the seat's
 * controller acts instead.
 */
import { z } from "zod";
import { TurnTimeout, type AgentReply, type AgentTurn } from "../../worlds/core/agent.js";
import type { World } from "../../worlds/core/world.js";

export interface PendingTurn<A = unknown> {
  readonly agent: string;
  readonly timestep: number;
  readonly turn: AgentTurn<A>;
  readonly opened: number;
  /** Who the person is (logged with the action). */
  readonly person: string;
}

interface Open<A> extends PendingTurn<A> {
  readonly resolve: (reply: AgentReply<A>) => void;
  readonly reject: (err: Error) => void;
}

export interface TurnListener<A> {
  opened(turn: PendingTurn<A>): void;
  closed(turn: PendingTurn<A>, outcome: "human" | "timeout" | "ended"): void;
}

export type SubmitResult = { ok: true; timestep: number } | { ok: false; error: string; timestep?: number };

export class HumanTurns<S, A> {
  private readonly open = new Map<string, Open<A>>();

  constructor(
    private readonly world: World<S, A, unknown>,
    /** The state the pending turns are about (the loop's current state). */
    private readonly currentState: () => S,
    private readonly listener: TurnListener<A>,
    /** What the room refuses of a person beyond the world's rules (a question's empty answer), with the reason. */
    private readonly personCheck?: (state: S, agent: string, action: A) => string | undefined,
  ) {}

  /** Opens `turn` for the person in `agent`'s seat (numbered `timestep` for them); resolves with their valid action. */
  await(turn: AgentTurn<A>, person: string, timestep = turn.timestep): Promise<AgentReply<A>> {
    this.close(turn.agent, "ended");
    return new Promise<AgentReply<A>>((resolve, reject) => {
      const pending: Open<A> = { agent: turn.agent, timestep, turn, opened: Date.now(), person, resolve, reject };
      this.open.set(turn.agent, pending);
      // The loop aborts the signal at the deadline (or when the episode is cancelled).
      turn.signal?.addEventListener("abort", () => this.close(turn.agent, "timeout", pending), { once: true });
      this.listener.opened(pending);
    });
  }

  pending(agent: string): PendingTurn<A> | undefined {
    return this.open.get(agent);
  }

  /** A person's action for `agent`'s pending turn. Never throws: a bad action is an answer. */
  submit(agent: string, raw: unknown, timestep?: number): SubmitResult {
    const p = this.open.get(agent);
    if (!p) return { ok: false, error: `it is not ${agent}'s turn`, ...(timestep !== undefined ? { timestep } : {}) };
    if (timestep !== undefined && timestep !== p.timestep) {
      return { ok: false, error: `that action was for timestep ${timestep}; the current turn is timestep ${p.timestep}`, timestep: p.timestep };
    }
    const parsed = p.turn.actionSchema.safeParse(raw);
    if (!parsed.success) {
      return { ok: false, error: `invalid action: ${z.prettifyError(parsed.error).replace(/\n\s*/g, " ").replace(/✖ /g, "")}`, timestep: p.timestep };
    }
    const action = parsed.data;
    const refused = this.personCheck?.(this.currentState(), agent, action);
    if (refused) return { ok: false, error: refused, timestep: p.timestep };
    if (!this.world.isNoop(action)) {
      let reason: string | undefined;
      try {
        reason = this.world.check?.(this.currentState(), agent, action);
      } catch (err) {
        reason = `the world could not check it (${(err as Error).message})`;
      }
      if (reason) return { ok: false, error: `action not possible: ${reason}`, timestep: p.timestep };
    }
    this.open.delete(agent);
    p.resolve({ action, info: { person: p.person, thinkMs: Date.now() - p.opened } });
    this.listener.closed(p, "human");
    return { ok: true, timestep: p.timestep };
  }

  /** Closes `agent`'s turn without an action (deadline, person gone, episode over): the controller acts. */
  close(agent: string, outcome: "timeout" | "ended", only?: PendingTurn<A>): void {
    const p = this.open.get(agent);
    if (!p || (only && p !== only)) return;
    this.open.delete(agent);
    p.reject(outcome === "timeout" ? new TurnTimeout("the person did not act in time") : new Error("the person's turn was closed"));
    this.listener.closed(p, outcome);
  }

  closeAll(): void {
    for (const agent of [...this.open.keys()]) this.close(agent, "ended");
  }
}
