/**
 * The person's panel in a seat: what their agent perceives now (and believes), the action form,
 * the deadline, and what became of each action they sent.
 */
import type { ActionResultMessage, TurnMessage, TurnOverMessage } from "../../server/protocol.js";
import { actionForm } from "./action-form.js";
import { h, replace } from "./dom.js";

export class SeatPanel {
  readonly element = h("div.card.seat-panel#seat-panel");
  private turn: TurnMessage | undefined;
  /** Built once per turn, so that a refused action leaves the person's choices in place. */
  private form: HTMLElement | undefined;
  private note: { kind: "ok" | "error" | "info"; text: string } | undefined;
  private readonly deadlineBar = h("div.deadline");
  private timer: number | undefined;

  constructor(
    private agent: string,
    private readonly act: (action: unknown, timestep: number) => void,
    private readonly leave: () => void,
    /** What a turn is called: "timestep" in a simulation, "question" in a benchmark. */
    private readonly unit: "timestep" | "question" = "timestep",
  ) {
    this.render();
    this.timer = window.setInterval(() => this.tick(), 250);
  }

  setAgent(agent: string): void {
    this.agent = agent;
    this.render();
  }

  setTurn(turn: TurnMessage): void {
    this.turn = turn;
    this.form = actionForm(turn.actionSchema, turn.options, (action) => this.act(action, turn.timestep)).element;
    this.note = undefined;
    this.render();
  }

  turnOver(msg: TurnOverMessage): void {
    if (this.turn && msg.timestep === this.turn.timestep) {
      this.turn = undefined;
      this.form = undefined;
      if (msg.outcome === "timeout")
        this.note = {
          kind: "info",
          text: this.unit === "question" ? `Time was up for question ${msg.timestep}: it counts as unanswered.` : `Time was up at timestep ${msg.timestep}: your seat's controller acted for you.`,
        };
      if (msg.outcome === "ended") this.note = { kind: "info", text: "That turn is over." };
      this.render();
    }
  }

  result(msg: ActionResultMessage): void {
    this.note = msg.ok ? { kind: "ok", text: `Done: your action for ${this.unit} ${msg.timestep} was taken.` } : { kind: "error", text: msg.error };
    this.render();
  }

  dispose(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }

  private tick(): void {
    const d = this.turn?.deadline;
    if (!d) {
      this.deadlineBar.textContent = "";
      return;
    }
    const left = Math.max(0, d - Date.now());
    this.deadlineBar.textContent = `${Math.ceil(left / 1000)} s left`;
    this.deadlineBar.classList.toggle("urgent", left < 5000);
  }

  private render(): void {
    const t = this.turn;
    replace(
      this.element,
      h("div.row", h("h3", this.agent ? `You play ${this.agent}` : "You hold a seat"), h("button.link", { onclick: () => this.leave() }, "leave seat")),
      !this.agent ? h("p.muted", "Your seat has no character in this episode; you will get one in the next.") : null,
      t
        ? [
            h("div.turn-head", h("strong", `Your turn · ${this.unit} ${t.timestep}`), this.deadlineBar),
            h("div.obs", h("div.label", "you perceive"), h("pre.text#observation", t.observation.text || "nothing")),
            perception(t.observation.data),
            t.mentalState ? h("div.obs", h("div.label", "you believe"), h("div.mind", t.mentalState)) : null,
            this.form,
          ]
        : this.agent
          ? h("p.muted#waiting", "Waiting for your next turn…")
          : null,
      this.note ? h(`p.note.${this.note.kind}#action-note`, this.note.text) : null,
    );
    this.tick();
  }
}

/** The world's structured observation, shown as a short list (ToMi: room, who is there, what is where). */
function perception(data: unknown): HTMLElement | null {
  if (!data || typeof data !== "object") return null;
  const d = data as Record<string, unknown>;
  if ("prompt" in d) return null; // a benchmark question: the text says it all
  const rows = Object.entries(d).map(([k, v]) =>
    h("li", h("span.label", `${k}: `), v === null ? "—" : Array.isArray(v) ? v.join(", ") || "—" : typeof v === "object" ? Object.entries(v as object).map(([a, b]) => `${a} → ${String(b)}`).join(", ") || "—" : String(v)),
  );
  return rows.length ? h("ul.perception", rows) : null;
}
