/**
 * The training dashboard (#/training): every training run the server knows of (self-play rounds
 * of its rooms, and `train grpo --server` runs elsewhere), with its reward, KL and accuracy over
 * the steps as plots, and for self-play the pool's quiz accuracy round by round: on its fixed
 * held-out questions (with the pool's `heldOutEpisodes`: the measure of a rise, with its 95%
 * interval) and on the episodes each round played itself (other stories every round), updated
 * live from the socket.io progress stream.
 */
import { api, type HeldOutPoint, type QuizAccuracyPoint, type TrainingMetrics, type TrainingRun } from "./api.js";
import { Chart } from "./chart.js";
import { ago, h, keepChildren, replace } from "./dom.js";
import { formatNumber, pct } from "./format.js";
import { onProgress } from "./progress.js";

/** The held-out chart's title: the same questions every round, so that a reader does not take it for the room's own quiz. */
const HELD_OUT_TITLE = "quiz accuracy on held-out episodes (the same questions every round)";

export function showTraining(app: HTMLElement): () => void {
  const box = h("div#training", h("p.muted", "loading training runs…"));
  app.append(h("section", h("h2", "Training"), box));
  const runs = new Map<string, TrainingRun>();
  // One card per run, kept across redraws: its charts take new points instead of being drawn anew.
  const cards = new Map<string, RunCard>();

  const draw = () => {
    const list = [...runs.values()].sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1));
    if (list.length === 0) {
      return replace(
        box,
        h("p.muted", "No training runs yet. Give a simulation room a self-play schedule (the selfPlay room option), or run `socialworld train grpo --server URL` to see one here."),
      );
    }
    for (const run of list) {
      let c = cards.get(run.runId);
      if (!c) cards.set(run.runId, (c = new RunCard(run.runId)));
      c.update(run);
    }
    // Moved, not rebuilt: a chart being hovered or zoomed stays as it is.
    const want = list.map((r) => cards.get(r.runId)!.element);
    keepChildren(box, want);
  };

  void api
    .training()
    .then((list) => {
      for (const r of list) runs.set(r.runId, r);
      draw();
    })
    .catch((err: Error) => replace(box, h("p.error", `cannot reach the server: ${err.message}`)));

  const off = onProgress((type, e) => {
    if (e.kind !== "trainer") return;
    let run = runs.get(e.runId);
    if (e.quizAccuracy && run) run.quizAccuracy = e.quizAccuracy;
    if (e.heldOutAccuracy && run) run.heldOutAccuracy = e.heldOutAccuracy;
    if (type === "progress" && e.metrics) {
      if (!run) {
        run = { runId: e.runId, title: e.title ?? e.runId, source: e.source ?? "", steps: e.steps ?? 0, status: "running", roomIds: e.roomIds ?? [], startedAt: new Date().toISOString(), updatedAt: new Date().toISOString(), history: [] };
        runs.set(e.runId, run);
      }
      if (e.round !== undefined) run.round = e.round;
      if (e.quizAccuracy) run.quizAccuracy = e.quizAccuracy;
      if (e.heldOutAccuracy) run.heldOutAccuracy = e.heldOutAccuracy;
      run.status = "running";
      run.updatedAt = new Date().toISOString();
      const i = run.history.findIndex((m) => m.step >= e.metrics!.step);
      if (i >= 0) run.history.splice(i);
      run.history.push(e.metrics);
    } else if (type === "finished" && run) {
      run.status = (e.status as TrainingRun["status"]) ?? "done";
      if (e.checkpoint) run.checkpoint = e.checkpoint;
      if (e.error) run.error = e.error;
    }
    draw();
  });
  return () => {
    off();
    for (const c of cards.values()) c.destroy();
  };
}

/** A training run's card: its line of latest figures and its reward, KL and accuracy charts. */
class RunCard {
  private readonly head = h("h3");
  private readonly meta = h("p.muted.small");
  private readonly figures = h("p.small.figures");
  private readonly reward = new Chart("reward", [{ name: "reward", color: "#3558d4" }]);
  private readonly kl = new Chart("KL to the reference", [{ name: "KL", color: "#b7791f" }]);
  private readonly accuracy = new Chart("accuracy", [{ name: "accuracy", color: "#1f8a4c", format: (y) => pct(y) }], { yMin: 0, yMax: 1 });
  /** Self-play: each round's policy on the quiz questions of episodes it played (new to it), by round. */
  private readonly quiz = new Chart("quiz accuracy on new episodes", [{ name: "quiz accuracy", color: "#8b3fb5", format: (y) => pct(y) }], { yMin: 0, yMax: 1, xLabel: "round" });
  /**
   * Self-play with held-out episodes: each round's policy on the same questions, of episodes no
   * round trained on, with the 95% Wilson interval as a band: the curve that shows a rise.
   */
  private readonly heldOut = new Chart(
    HELD_OUT_TITLE,
    [
      { name: "held-out accuracy", color: "#c2410c", format: (y) => pct(y) },
      { name: "95% high", color: "#e9a27c", format: (y) => pct(y), dash: [4, 3], width: 1 },
      { name: "95% low", color: "#e9a27c", format: (y) => pct(y), dash: [4, 3], width: 1 },
    ],
    { yMin: 0, yMax: 1, xLabel: "round", band: { between: [1, 2], fill: "rgba(194, 65, 12, 0.12)" } },
  );
  readonly element: HTMLElement;

  constructor(runId: string) {
    this.quiz.element.hidden = true;
    this.heldOut.element.hidden = true;
    this.element = h(
      "div.card.training-run",
      { dataset: { run: runId } },
      this.head,
      this.meta,
      this.figures,
      h("div.charts", this.reward.element, this.kl.element, this.accuracy.element, this.heldOut.element, this.quiz.element),
    );
  }

  update(run: TrainingRun): void {
    const hist = run.history;
    const last: TrainingMetrics | undefined = hist.at(-1);
    const pts = (f: (m: TrainingMetrics) => number | null) => [hist.map((m) => ({ x: m.step, y: f(m) }))];
    replace(this.head, run.title, " ", h(`span.status.${run.status}`, run.status), run.round !== undefined ? h("span.badge", `round ${run.round}`) : null);
    replace(
      this.meta,
      run.source,
      ` · step ${last?.step ?? 0}/${run.steps}`,
      run.roomIds.length ? ` · rooms ${run.roomIds.join(", ")}` : "",
      ` · updated ${ago(run.updatedAt)}`,
      run.checkpoint ? h("span.mono", ` · ${run.checkpoint}`) : null,
      run.error ? h("div.error", run.error) : null,
    );
    // The same format as the charts' (format.ts): a KL of 3.07e-6 is not "0.0000" here.
    replace(
      this.figures,
      last
        ? `reward ${formatNumber(last.reward)} · accuracy ${pct(last.accuracy)} · KL ${formatNumber(last.kl)} · entropy ${formatNumber(last.entropy)} · clip ${pct(last.clipFraction)} · length ${formatNumber(last.responseLength)}`
        : "",
    );
    this.reward.update(pts((m) => m.reward));
    this.kl.update(pts((m) => m.kl));
    this.accuracy.update(pts((m) => m.accuracy));
    const quiz: readonly QuizAccuracyPoint[] = run.quizAccuracy ?? [];
    this.quiz.element.hidden = quiz.length === 0;
    const lastQuiz = quiz.at(-1);
    if (lastQuiz) this.quiz.update([quiz.map((q) => ({ x: q.round, y: q.accuracy }))], `round ${lastQuiz.round}: ${lastQuiz.correct}/${lastQuiz.questions}`);
    const held: readonly HeldOutPoint[] = run.heldOutAccuracy ?? [];
    this.heldOut.element.hidden = held.length === 0;
    const lastHeld = held.at(-1);
    if (lastHeld) {
      const series = (f: (p: HeldOutPoint) => number) => held.map((p) => ({ x: p.round, y: f(p) }));
      this.heldOut.update(
        [series((p) => p.accuracy), series((p) => p.high), series((p) => p.low)],
        `round ${lastHeld.round}: ${lastHeld.correct}/${lastHeld.questions} [${pct(lastHeld.low)}, ${pct(lastHeld.high)}]`,
      );
    }
  }

  destroy(): void {
    for (const c of [this.reward, this.kl, this.accuracy, this.heldOut, this.quiz]) c.destroy();
  }
}
