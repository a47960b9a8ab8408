/**
 * A FANToM conversation as text ("Name: utterance" per line) and what the text says about who is
 * present. FANToM marks no entrances or exits: a character says it has to go ("Sorry, I need to
 * take this call"), falls silent, and later speaks again ("I'm back! What did I miss?"). The rules
 * here recover that:
 *
 * - everyone who speaks is present from the start, except a character whose first line comes
 *   after the opening lines and greets the group as a newcomer ("mind if I join?"): it joins there;
 * - a line with a leaving cue ends its speaker's presence, unless the speaker talks again within
 *   the next few lines or the line sees off someone who has just left ("See you soon, David!");
 * - a character who speaks while away has rejoined, just before that line;
 * - when the data names the character who leaves and rejoins (FANToM's `joining_speaker`) and no
 *   cue marks its exit, it left after its line that precedes its longest silence.
 */
import { DataError } from "../core/errors.js";
import type { FantomAction } from "./world.js";

export interface Utterance {
  readonly speaker: string;
  readonly text: string;
  /** 1-based line in the context. */
  readonly line: number;
}

const LINE_RE = /^\s*([^:\n]{1,60}?)\s*:\s*(.*)$/;

/** Splits a context into utterances; a line without "Name:" continues the previous utterance. */
export function parseContext(text: string, file: string, field: string): Utterance[] {
  const out: { speaker: string; text: string; line: number }[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    const m = LINE_RE.exec(line);
    const name = m?.[1]?.trim();
    if (m && name && /\p{L}/u.test(name) && name.split(/\s+/).length <= 4) {
      out.push({ speaker: name, text: m[2]!.trim(), line: i + 1 });
      return;
    }
    const prev = out[out.length - 1];
    if (!prev) throw new DataError(file, { field }, `line ${i + 1} is not "Name: utterance": "${line.slice(0, 60)}"`);
    prev.text = `${prev.text} ${line.trim()}`;
  });
  if (out.length === 0) throw new DataError(file, { field }, "the conversation is empty");
  return out;
}

/** The transcript form of utterances ("Name: text" lines). */
export function renderContext(utterances: readonly { speaker: string; text: string }[]): string {
  return utterances.map((u) => `${u.speaker}: ${u.text}`).join("\n");
}

const LEAVE_CUE =
  /\b(be right back|brb|(need|have|got) to (go|run|head|leave|step|take|grab|answer|get going)|gotta (go|run|head)|i'?ll be back|i will be back|excuse me for a|step(ping)? (out|away)|head(ing)? (out|home|off)|should (get going|go|head)|take this call|catch you (all |guys )?later|see you (all |guys )?later|i'?m off\b|bye,? (everyone|all|guys))/i;
const JOIN_CUE = /\b(i'?m back|i am back|what did i miss|what'?d i miss|mind if i join|can i join|room for one more|what are you (all |guys )?(talking|chatting) about)\b/i;

export const isLeaveLine = (text: string) => LEAVE_CUE.test(text);
export const isJoinLine = (text: string) => JOIN_CUE.test(text);

/** Lines a leaver stays silent for before its exit is believed. */
const SILENCE_AFTER_LEAVING = 3;
/** Lines at the start where a greeting is not a newcomer's. */
const OPENING = 3;

export interface PresenceStep {
  readonly actor: string;
  readonly action: FantomAction;
  /** The utterance index this step belongs to. */
  readonly utterance: number;
}

export interface Presence {
  readonly characters: readonly string[];
  readonly initiallyPresent: readonly string[];
  /** One step per utterance, plus a join before a returning speaker's line and a leave after a leaving line. */
  readonly steps: readonly PresenceStep[];
  /** For each utterance, who was present to hear it. */
  readonly hearers: readonly (readonly string[])[];
}

export interface PresenceOptions {
  /** The character the data says leaves and rejoins (FANToM's `joining_speaker`). */
  readonly joiningSpeaker?: string;
  /** Facts each utterance conveys, by utterance index (for the world's knowledge). */
  readonly facts?: ReadonlyMap<number, readonly string[]>;
}

export function inferPresence(utts: readonly Utterance[], opts: PresenceOptions = {}): Presence {
  const characters: string[] = [];
  for (const u of utts) if (!characters.includes(u.speaker)) characters.push(u.speaker);
  const firstLine = new Map<string, number>();
  utts.forEach((u, i) => {
    if (!firstLine.has(u.speaker)) firstLine.set(u.speaker, i);
  });
  const latecomers = new Set(characters.filter((c) => firstLine.get(c)! >= OPENING && isJoinLine(utts[firstLine.get(c)!]!.text)));

  const leavesAfter = new Set<number>();
  const leftAt = new Map<string, number>();
  utts.forEach((u, i) => {
    if (!isLeaveLine(u.text)) return;
    const soon = utts.slice(i + 1, i + 1 + SILENCE_AFTER_LEAVING).some((v) => v.speaker === u.speaker);
    if (soon) return;
    const seeingOff = [...leftAt.entries()].some(([who, at]) => who !== u.speaker && i - at <= SILENCE_AFTER_LEAVING && u.text.includes(who));
    if (seeingOff) return;
    leavesAfter.add(i);
    leftAt.set(u.speaker, i);
  });

  const j = opts.joiningSpeaker;
  if (j !== undefined && characters.includes(j)) {
    const mine = utts.flatMap((u, i) => (u.speaker === j ? [i] : []));
    const hasExit = mine.some((i) => leavesAfter.has(i));
    if (!hasExit && mine.length >= 2) {
      let best = -1;
      let gap = 1;
      for (let k = 0; k + 1 < mine.length; k++) {
        const g = mine[k + 1]! - mine[k]! - 1;
        if (g > gap) [best, gap] = [mine[k]!, g];
      }
      if (best >= 0) leavesAfter.add(best);
    }
  }

  const present = new Set(characters.filter((c) => !latecomers.has(c)));
  const initiallyPresent = characters.filter((c) => present.has(c));
  const steps: PresenceStep[] = [];
  const hearers: string[][] = [];
  utts.forEach((u, i) => {
    if (!present.has(u.speaker)) {
      steps.push({ actor: u.speaker, action: { type: "join" }, utterance: i });
      present.add(u.speaker);
    }
    const facts = opts.facts?.get(i);
    steps.push({ actor: u.speaker, action: facts?.length ? { type: "say", text: u.text, facts } : { type: "say", text: u.text }, utterance: i });
    hearers.push(characters.filter((c) => present.has(c)));
    if (leavesAfter.has(i)) {
      steps.push({ actor: u.speaker, action: { type: "leave" }, utterance: i });
      present.delete(u.speaker);
    }
  });
  return { characters, initiallyPresent, steps, hearers };
}
