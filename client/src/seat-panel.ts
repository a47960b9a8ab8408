/**
 * The person's panel in a seat: what their agent perceives now (and believes), the action form,
 * the deadline, and what became of each action they sent.
 */
import type { ActionResultMessage, TurnMessage, TurnOverMessage } from "../../server/protocol.js";
import { actionForm } from "./action-form.js";
import { answerForm, questionOf } from "./answer-form.js";
import { h, replace } from "./dom.js";
import { formatPerceived } from "./format.js";

export class SeatPanel {
  readonly element = h("div.card.seat-panel#seat-panel");
  private turn: TurnMessage | undefined;
  /** Built once per turn, so that a refused action leaves the person's choices in place. */
  private form: HTMLElement | undefined;
  /** What became of the last action; `verdict`: the last question's right or wrong, kept through the next question. */
  private note: { kind: "ok" | "error" | "info"; text: string; verdict?: true } | undefined;
  private readonly deadlineBar = h("div.deadline");
  private timer: number | undefined;
  /** The question this person answered last, until its verdict is shown (a benchmark seat). */
  private awaitingVerdict: number | undefined;
  /** The last turn was a benchmark question (answered with answer-form.ts). */
  private asked = false;

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
    const question = questionOf(turn.observation.data);
    this.asked = question !== undefined;
    this.form = question
      ? answerForm(question, (answer) => this.act({ answer }, turn.timestep))
      : actionForm(turn.actionSchema, turn.options, (action) => this.act(action, turn.timestep)).element;
    if (!this.note?.verdict && this.awaitingVerdict === undefined) this.note = undefined;
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
    if (msg.ok && this.asked) {
      this.awaitingVerdict = msg.timestep;
      this.note = { kind: "info", text: `Your answer to question ${msg.timestep} was taken: scoring it…` };
    } else this.note = msg.ok ? { kind: "ok", text: `Done: your action for ${this.unit} ${msg.timestep} was taken.` } : { kind: "error", text: msg.error };
    this.render();
  }

  /** A benchmark's latest outcomes (the room's progress): says whether the answer just given was right. */
  verdicts(recent: readonly { index: number; correct: boolean }[]): void {
    if (this.awaitingVerdict === undefined) return;
    const n = this.awaitingVerdict;
    const outcome = recent.find((r) => r.index === n);
    if (!outcome) return;
    this.awaitingVerdict = undefined;
    this.note = outcome.correct
      ? { kind: "ok", text: `✓ Right: your answer to question ${n} is correct.`, verdict: true }
      : { kind: "error", text: `✗ Wrong: your answer to question ${n} is not the label.`, verdict: true };
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
            // A question's form shows its story and question itself (once).
            questionOf(t.observation.data) ? null : [h("div.obs", h("div.label", "you perceive"), h("pre.text#observation", t.observation.text || "nothing")), perception(t.observation.data)],
            t.mentalState ? h("div.obs", h("div.label", "you believe"), h("div.mind", t.mentalState)) : null,
            this.form,
          ]
        : this.agent
          ? h("p.muted#waiting", "Waiting for your next turn…")
          : null,
      this.note ? h(`p.note.${this.note.kind}#action-note`, { role: "status" }, this.note.text) : null,
    );
    this.tick();
  }
}

/** The world's structured observation, shown as a short list (ToMi: room, who is there, what is where). */
function perception(data: unknown): HTMLElement | null {
  if (!data || typeof data !== "object") return null;
  const d = data as Record<string, unknown>;
  if ("prompt" in d) return null; // a benchmark question: the text says it all
  const rows = Object.entries(d).map(([k, v]) => h("li", h("span.label", `${k}: `), shown(v)));
  return rows.length ? h("ul.perception", rows) : null;
}

/**
 * A perceived value as text, nested objects included (a household's finances hold its last
 * decision), its numbers as formatPerceived writes them.
 */
function shown(v: unknown): string {
  if (v === null || v === undefined) return "—";
  if (typeof v === "number") return formatPerceived(v);
  if (Array.isArray(v)) return v.map(shown).join(", ") || "—";
  if (typeof v === "object") return Object.entries(v as object).map(([a, b]) => (b !== null && typeof b === "object" && !Array.isArray(b) ? `${a} → (${shown(b)})` : `${a} → ${shown(b)}`)).join(", ") || "—";
  return String(v);
}
