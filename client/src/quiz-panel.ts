/**
 * A room's quiz (the `quiz` option): the public scores, by who answered (people, models, the
 * symbolic agent: baselines on live episodes) and each seat's last episode; and, for a page in a
 * seat, its own questions about the episode just played, with a form to answer each before the
 * deadline, then its result with the labels.
 */
import type { QuizMessage, QuizResultMessage, QuizScoreJson } from "../../server/protocol.js";
import { h, pct, replace } from "./dom.js";

export function renderQuizScores(el: HTMLElement, scores: readonly QuizScoreJson[] | undefined): void {
  if (!scores?.length) return replace(el);
  const by = new Map<string, { asked: number; correct: number; episodes: Set<number> }>();
  for (const s of scores) {
    const e = by.get(s.answeredBy) ?? { asked: 0, correct: 0, episodes: new Set<number>() };
    e.asked += s.asked;
    e.correct += s.correct;
    e.episodes.add(s.episode);
    by.set(s.answeredBy, e);
  }
  const lastEpisode = Math.max(...scores.map((s) => s.episode));
  const last = scores.filter((s) => s.episode === lastEpisode);
  replace(
    el,
    h("h3", "Quiz"),
    h(
      "table.list.scores#quiz-scores",
      h("thead", h("tr", h("th", "answered by"), h("th.num", "episodes"), h("th.num", "asked"), h("th.num", "accuracy"))),
      h(
        "tbody",
        [...by].map(([who, e]) => h("tr", h("td", who), h("td.num", String(e.episodes.size)), h("td.num", String(e.asked)), h("td.num", e.asked ? pct(e.correct / e.asked) : "–"))),
      ),
    ),
    h("p.muted", `episode ${lastEpisode}: `, last.map((s) => `${s.agent} ${s.correct}/${s.asked}`).join(" · ")),
  );
}

/** A seated person's quiz: its questions, each answered once, then the result. */
export class QuizForm {
  readonly element = h("div.card.quiz#quiz");
  private quiz: QuizMessage | undefined;
  private readonly answered = new Map<number, string>();

  constructor(private readonly send: (episode: number, id: number, answer: string) => void) {}

  open(quiz: QuizMessage): void {
    this.quiz = quiz;
    this.answered.clear();
    this.render();
  }

  acknowledged(m: { ok: boolean; id?: number; error?: string }): void {
    if (!m.ok && m.id !== undefined) this.answered.delete(m.id);
    this.render(m.ok ? undefined : m.error);
  }

  closed(result: QuizResultMessage): void {
    this.quiz = undefined;
    replace(
      this.element,
      h("h3", `Your quiz · episode ${result.episode}: ${result.correct}/${result.asked}`),
      h(
        "ol",
        result.questions.map((q) => h(`li.${q.correct ? "right" : "wrong"}`, q.question, " ", h("strong", q.answer || "(no answer)"), q.correct ? " ✓" : ` ✗ (${q.label})`)),
      ),
    );
  }

  private render(error?: string): void {
    const quiz = this.quiz;
    if (!quiz) return;
    const left = Math.max(0, Math.ceil((quiz.deadline - Date.now()) / 1000));
    replace(
      this.element,
      h("h3", `Quiz on episode ${quiz.episode} · ${left}s`),
      h("details", h("summary", "the story"), h("pre.story", quiz.story)),
      h(
        "ol",
        quiz.questions.map((q) =>
          h(
            "li",
            { dataset: { question: String(q.id) } },
            h("p", q.question),
            this.answered.has(q.id)
              ? h("p.muted", `answered: ${this.answered.get(q.id)!}`)
              : h(
                  "div.choices",
                  (q.choices ?? []).map((c) =>
                    h(
                      "button",
                      {
                        onclick: () => {
                          this.answered.set(q.id, c);
                          this.send(quiz.episode, q.id, c);
                          this.render();
                        },
                      },
                      c,
                    ),
                  ),
                ),
          ),
        ),
      ),
      error ? h("p.error", error) : null,
    );
  }
}
