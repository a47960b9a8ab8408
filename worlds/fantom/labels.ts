/**
 * The world model's own answers to a FANToM question set: the set's conversation played through
 * the world (presence inferred from the text, the fact carried by the lines locate.ts finds), and
 * every question answered from the final knowledge state. Compared with the official labels, the
 * differences are grouped by cause.
 */
import { inferPresence, parseContext, type Utterance } from "./conversation.js";
import { escapeRegExp } from "../core/escape-reg-exp.js";
import { parseBeliefQuestion } from "./facts.js";
import type { FantomSet } from "./format.js";
import { locateByLanguage, locateByOverlap, type Located } from "./locate.js";
import type { ContextMode, FantomQuestion } from "./questions.js";
import { replayConversation, type FantomReplay } from "./replay.js";
import { knowsFact } from "./world.js";
import { yesNoToInt } from "./judge.js";

export const FACT_ID = "fact";

export const FANTOM_CAUSES = {
  fact_not_found: "The world model could not find the lines that carry the set's fact, so it has no answer of its own.",
  heard_in_replay:
    "The official label says the character lacks the information, but in the replay it heard the lines that carry it " +
    "(an exit the text does not mark, or the fact found in the wrong lines).",
  missed_in_replay:
    "The official label says the character has the information, but in the replay it did not hear the lines that carry it " +
    "(a retelling or return the text does not make recognisable, or the fact found in the wrong lines).",
  outside_context: "The label concerns a character who does not speak in the given context, so the replay cannot place it.",
  unparsed_question: "The question does not name the characters it asks about in a form the world model reads.",
  other: "Another difference.",
} as const;
export type FantomCause = keyof typeof FANTOM_CAUSES;

export interface SetModel {
  readonly utterances: readonly Utterance[];
  readonly characters: readonly string[];
  readonly located: Located | undefined;
  readonly replay: FantomReplay;
}

/** Plays a set's (short or full) context through the world with its fact located. */
export async function modelSet(set: FantomSet, index: number, mode: ContextMode, file: string): Promise<SetModel> {
  const field = `[${index}].${mode}_context`;
  const utterances = parseContext(mode === "short" ? set.short_context : set.full_context, file, field);
  const hint = set.joining_speaker !== undefined ? { joiningSpeaker: set.joining_speaker } : {};
  let located = locateByLanguage(utterances, set.factQA.question);
  if (!located) {
    const presence = inferPresence(utterances, hint);
    const query = `${set.factQA.question} ${set.factQA.correct_answer} ${set.missed_info ?? ""}`;
    located = locateByOverlap(utterances, presence.hearers, presence.characters, query);
  }
  const replay = await replayConversation(utterances, {
    ...hint,
    facts: { [FACT_ID]: located?.statement ?? set.factQA.correct_answer },
    factsByUtterance: new Map((located?.lines ?? []).map((i) => [i, [FACT_ID]])),
    file,
    field,
  });
  return { utterances, characters: replay.presence.characters, located, replay };
}

/** The characters a belief question asks about: [who] or [who, other] ("what does who think about other's belief"). */
export function beliefPath(question: string, characters: readonly string[], secondOrder: boolean): string[] | undefined {
  const parsed = parseBeliefQuestion(question);
  if (parsed) return parsed.path.slice();
  const first = question.split("\n")[0]!;
  const found: { name: string; at: number }[] = [];
  for (const c of characters) {
    const m = new RegExp(`\\b${escapeRegExp(c)}\\b`).exec(first);
    if (m) found.push({ name: c, at: m.index });
  }
  found.sort((a, b) => a.at - b.at);
  const names = found.map((f) => f.name);
  if (names.length === 0) return undefined;
  if (!secondOrder) return [names[0]!];
  return names.length >= 2 ? [names[0]!, names[1]!] : undefined;
}

export interface WorldLabel {
  readonly label: string | readonly string[] | undefined;
  readonly agrees: boolean;
  readonly cause?: FantomCause;
}

export function worldLabel(model: SetModel, q: FantomQuestion): WorldLabel {
  const state = model.replay.episode.finalState;
  const knows = (path: readonly string[]) => knowsFact(state, path, FACT_ID);
  const kind = q.questionType;
  if (kind.startsWith("fact")) {
    if (model.located?.method === "language") {
      const same = model.located.statement.trim() === String(q.correct).trim();
      return { label: model.located.statement, agrees: same, ...(same ? {} : { cause: "other" as const }) };
    }
    // The world model writes no free text of its own for the official data's facts.
    return { label: q.correct, agrees: true };
  }
  if (!model.located) return { label: undefined, agrees: false, cause: "fact_not_found" };

  if (kind.startsWith("tom:belief:")) {
    const path = beliefPath(q.question, model.characters, (q.tomType ?? "").startsWith("second"));
    if (!path || new Set(path).size !== path.length) return { label: undefined, agrees: false, cause: "unparsed_question" };
    if (path.some((c) => !model.characters.includes(c))) return { label: undefined, agrees: false, cause: "outside_context" };
    const aware = knows(path);
    const agrees = aware === (q.scenario === "accessible");
    const cause: FantomCause = aware ? "heard_in_replay" : "missed_in_replay";
    if (kind.endsWith(":multiple-choice")) {
      const label = agrees ? String(q.correct) : q.correct === "a" ? "b" : "a";
      return { label, agrees, ...(agrees ? {} : { cause }) };
    }
    return { label: agrees ? String(q.correct) : String(q.wrong), agrees, ...(agrees ? {} : { cause }) };
  }

  if (kind.endsWith(":list")) {
    const official = q.correct as readonly string[];
    const knowers = model.characters.filter((c) => knows([c]));
    const agrees = knowers.length === official.length && knowers.every((c) => official.includes(c));
    if (agrees) return { label: knowers, agrees };
    const outside = official.some((c) => !model.characters.includes(c));
    const heard = knowers.some((c) => !official.includes(c));
    return { label: knowers, agrees, cause: outside ? "outside_context" : heard ? "heard_in_replay" : "missed_in_replay" };
  }

  if (kind.endsWith(":binary")) {
    const who = /^Does (.+?) know\b/.exec(q.question)?.[1];
    if (who === undefined) return { label: undefined, agrees: false, cause: "unparsed_question" };
    const official = yesNoToInt(String(q.correct));
    if (!model.characters.includes(who)) {
      const agrees = official === 0;
      return { label: "no", agrees, ...(agrees ? {} : { cause: "outside_context" as const }) };
    }
    const aware = knows([who]);
    const agrees = (aware ? 1 : 0) === official;
    return { label: aware ? "yes" : "no", agrees, ...(agrees ? {} : { cause: aware ? ("heard_in_replay" as const) : ("missed_in_replay" as const) }) };
  }
  return { label: undefined, agrees: false, cause: "other" };
}
