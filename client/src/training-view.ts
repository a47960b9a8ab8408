/**
 * The training dashboard (#/training): every training run the server knows of (self-play rounds
 * of its rooms, and `train grpo --server` runs elsewhere), with its reward, KL and accuracy over
 * the steps as plots, and for self-play the pool's quiz accuracy on new episodes round by round,
 * updated live from the socket.io progress stream.
 */
import { api, type QuizAccuracyPoint, type TrainingMetrics, type TrainingRun } from "./api.js";
import { lineChart } from "./chart.js";
import { ago, h, pct, replace } from "./dom.js";
import { onProgress } from "./progress.js";

export function showTraining(app: HTMLElement): () => void {
  const box = h("div#training", h("p.muted", "loading training runs…"));
  app.append(h("section", h("h2", "Training"), box));
  const runs = new Map<string, TrainingRun>();

  const draw = () => {
    const list = [...runs.values()].sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1));
    if (list.length === 0) {
      return replace(
        box,
        h("p.muted", "No training runs yet. Give a simulation room a self-play schedule (the selfPlay room option), or run `socialworld train grpo --server URL` to see one here."),
      );
    }
    replace(box, list.map(card));
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
    if (type === "progress" && e.metrics) {
      if (!run) {
        run = { runId: e.runId, title: e.title ?? e.runId, source: e.source ?? "", steps: e.steps ?? 0, status: "running", roomIds: e.roomIds ?? [], startedAt: new Date().toISOString(), updatedAt: new Date().toISOString(), history: [] };
        runs.set(e.runId, run);
      }
      if (e.round !== undefined) run.round = e.round;
      if (e.quizAccuracy) run.quizAccuracy = e.quizAccuracy;
      run.status = "running";
      run.updatedAt = new Date().toISOString();
      const i = run.history.findIndex((m) => m.step >= e.metrics!.step);
      if (i >= 0) run.history.splice(i);
      run.history.push(e.metrics);
    } else if (type === "finished" && run) {
      run.status = (e.status as TrainingRun["status"]) ?? "done";
      if (e.checkpoint) run.checkpoint = e.checkpoint;
    }
    draw();
  });
  return off;
}

function card(run: TrainingRun): HTMLElement {
  const hist = run.history;
  const last: TrainingMetrics | undefined = hist.at(-1);
  const pts = (f: (m: TrainingMetrics) => number | null) => hist.map((m) => ({ x: m.step, y: f(m) ?? Number.NaN }));
  return h(
    "div.card.training-run",
    { dataset: { run: run.runId } },
    h("h3", run.title, " ", h(`span.status.${run.status}`, run.status), run.round !== undefined ? h("span.badge", `round ${run.round}`) : null),
    h(
      "p.muted.small",
      run.source,
      ` · step ${last?.step ?? 0}/${run.steps}`,
      run.roomIds.length ? ` · rooms ${run.roomIds.join(", ")}` : "",
      ` · updated ${ago(run.updatedAt)}`,
      run.checkpoint ? h("span.mono", ` · ${run.checkpoint}`) : null,
    ),
    last
      ? h(
          "p.small",
          `reward ${last.reward.toFixed(3)} · accuracy ${pct(last.accuracy)} · KL ${last.kl === null ? "–" : last.kl.toFixed(4)} · entropy ${last.entropy.toFixed(3)} · clip ${pct(last.clipFraction)} · length ${last.responseLength.toFixed(1)}`,
        )
      : null,
    h(
      "div.charts",
      lineChart("reward", [{ name: "reward", color: "#3558d4", points: pts((m) => m.reward) }]),
      lineChart("KL to the reference", [{ name: "KL", color: "#b7791f", points: pts((m) => m.kl) }]),
      lineChart("accuracy", [{ name: "accuracy", color: "#1f8a4c", points: pts((m) => m.accuracy), format: (y) => pct(y) }], { yMin: 0, yMax: 1 }),
      run.quizAccuracy?.length ? quizChart(run.quizAccuracy) : null,
    ),
  );
}

/** Self-play: each round's policy on the quiz questions of episodes it played (new to it), by round. */
function quizChart(series: readonly QuizAccuracyPoint[]): SVGSVGElement {
  const points = series.map((q) => ({ x: q.round, y: q.accuracy }));
  const last = series.at(-1)!;
  return lineChart(`quiz accuracy on new episodes (round ${last.round}: ${last.correct}/${last.questions})`, [{ name: "quiz accuracy", color: "#8b3fb5", points, format: (y) => pct(y) }], {
    yMin: 0,
    yMax: 1,
    xLabel: "round",
  });
}
