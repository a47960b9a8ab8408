/**
 * The majority-class baseline, `majority:FILE`: fitted on the labelled items of FILE (a training
 * split of the benchmark it is asked; or the file under test, the usual reporting of the trivial
 * baseline), it answers each question with the most frequent label among the fitted items like it
 * (the benchmark's own `majority`; the social world's: the same depth). It never sees a label of
 * the question it answers, only those of FILE. Fitted once per benchmark, on its first question.
 */
import { existsSync } from "node:fs";
import type { Agent, AgentReply, AgentTurn } from "../worlds/core/agent.js";
import { questionTaskOf, type Answer, type QuestionTask } from "../worlds/question/world.js";
import { loadBenchmark } from "../worlds/registry.js";
import { AgentSpecError } from "./agent-spec-error.js";

type Predict = (task: QuestionTask) => string;

export class MajorityAgent implements Agent<Answer> {
  readonly id = "majority";
  readonly trusted = true;
  private readonly fitted = new Map<string, Predict>();
  private readonly fitting = new Map<string, Promise<Predict>>();

  constructor(readonly file: string) {
    if (file === "") throw new AgentSpecError("majority:FILE needs the labelled file it is fitted on (a training split of the benchmark, or the file under test)");
    if (!existsSync(file)) throw new AgentSpecError(`majority:FILE: ${file} does not exist`);
  }

  act(turn: AgentTurn<Answer>): AgentReply<Answer> | Promise<AgentReply<Answer>> {
    const task = questionTaskOf(turn.observation.data);
    if (!task) throw new Error("the majority agent answers benchmark questions only");
    const predict = this.fitted.get(task.benchmark);
    if (predict) return { action: { answer: predict(task) } };
    return this.fit(task.benchmark).then((p) => ({ action: { answer: p(task) } }));
  }

  private fit(benchmark: string): Promise<Predict> {
    let p = this.fitting.get(benchmark);
    if (!p) {
      p = loadBenchmark(benchmark).then(async (b) => {
        if (!b.majority) throw new Error(`the ${benchmark} benchmark has no majority baseline`);
        const predict = b.majority(await b.load(this.file));
        this.fitted.set(benchmark, predict);
        return predict;
      });
      this.fitting.set(benchmark, p);
    }
    return p;
  }
}
