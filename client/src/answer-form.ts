/**
 * A person's answer to a benchmark question (a benchmark room's respondent seat): the story once,
 * the question, and one way to answer. A question that takes only some answers (its choices, or
 * candidates that hold every right answer: ToMi's containers) is answered by choosing one of them;
 * any other is answered in a text box, with the candidates as suggestions that fill it. An empty
 * answer is refused here with the reason; the server checks again (worlds/question/person-answer.ts).
 */
import { h } from "./dom.js";

/** The observation data of a question (worlds/question/world.ts, QuestionTask), as far as the form reads it. */
export interface QuestionData {
  readonly story: string;
  readonly question: string;
  readonly choices?: readonly string[];
  readonly candidates?: readonly string[];
  readonly answerInCandidates?: boolean;
}

export function questionOf(data: unknown): QuestionData | undefined {
  const d = data as Partial<QuestionData> & { prompt?: unknown } | undefined;
  return d && typeof d.story === "string" && typeof d.question === "string" && typeof d.prompt === "string" ? (d as QuestionData) : undefined;
}

export function answerForm(q: QuestionData, submit: (answer: string) => void): HTMLElement {
  const closed = q.choices?.length ? q.choices : q.answerInCandidates && q.candidates?.length ? q.candidates : undefined;
  const note = h("p.note.error#answer-error", { hidden: true });
  const say = (text: string) => {
    note.textContent = text;
    note.hidden = text === "";
  };
  const parts: (HTMLElement | null)[] = [h("div.obs", h("div.label", "the story"), h("pre.text.story#story", q.story)), h("p.question#question", q.question)];
  if (closed) {
    parts.push(
      h(
        "div.options#answer-choices",
        { role: "group", "aria-label": "answers" },
        h("span.muted.small", "answer:"),
        closed.map((c) => h("button.option", { type: "button", onclick: () => (say(""), submit(c)) }, c)),
      ),
    );
  } else {
    // A text area: some answers are several lines (usersim's reply is its states, then the response).
    const multiline = (q.candidates ?? []).some((c) => c.includes("\n"));
    const input = h("textarea#answer-text", { name: "answer", rows: multiline ? 8 : 2, maxLength: 4000, placeholder: "your answer (Ctrl+Enter sends it)", "aria-label": "your answer" });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) (input.form as HTMLFormElement | null)?.requestSubmit();
    });
    parts.push(
      h(
        "form.answer-form",
        {
          onsubmit: (e: Event) => {
            e.preventDefault();
            const answer = input.value.trim();
            if (!answer) return say("Type an answer first: an empty answer counts as wrong.");
            say("");
            submit(answer);
          },
        },
        input,
        h("button.primary", { type: "submit" }, "Answer"),
      ),
      q.candidates?.length
        ? h(
            "div.options.suggestions",
            h("span.muted.small", "suggestions:"),
            q.candidates.map((c) => h("button.option", { type: "button", title: c, onclick: () => ((input.value = c), input.focus(), say("")) }, short(c))),
          )
        : null,
    );
  }
  parts.push(note);
  return h("div.answer", parts);
}

/** A suggestion's label: its first 60 characters of text (the whole answer goes in the box). */
function short(answer: string): string {
  const text = answer.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();
  return text.length > 60 ? `${text.slice(0, 57)}…` : text || answer.slice(0, 60);
}
