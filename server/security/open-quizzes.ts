/**
 * An episode's record while its quiz is open. A room with the `quiz` option logs each episode's
 * record (every agent's observations and mind: the quiz's answers) at the episode's end, so that a
 * server killed mid-quiz loses nothing; what keeps the answers from the people being quizzed is
 * that clients are not shown that record until the quiz closes.
 *
 * The log itself says which quizzes are open, so that a restarted server knows too: the room logs
 * a `room_quiz_open` record before the episode's record and before any question goes out, and the
 * quiz's `room_quiz` record closes it. An open quiz stays open while the server that opened it
 * runs (its agents may answer past the people's deadline; it always logs the close), and after a
 * restart until its deadline has passed, or while the restored room plays that episode again (the
 * same seed: the old record would tell the new story).
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { randomUUID } from "node:crypto";

/** This server process, as the quizzes it opens name it. */
export const SERVER_INSTANCE = randomUUID();

export const QUIZ_OPEN = "room_quiz_open";
export const QUIZ_CLOSED = "room_quiz";

/** What the log keeps of a quiz being opened: nothing of the questions or the episode. */
export interface QuizOpenRecord {
  readonly kind: typeof QUIZ_OPEN;
  readonly run: string | null;
  readonly room: string;
  readonly episode: number;
  /** The people's deadline (ms since the epoch). */
  readonly deadline: number;
  readonly server: string;
}

export function quizOpenRecord(a: { run: string | null; room: string; episode: number; deadline: number }): QuizOpenRecord {
  // `kind` first: the scan below finds these lines by their first bytes without parsing the rest.
  return { kind: QUIZ_OPEN, run: a.run, room: a.room, episode: a.episode, deadline: a.deadline, server: SERVER_INSTANCE };
}

const LINE_START = Buffer.from(`{"kind":"${QUIZ_CLOSED}`);

/**
 * The episodes of a room's log whose quiz is open now. `liveEpisode`: the episode the run's room
 * is playing in this process, if any. Only the quiz records' lines are parsed (the episodes'
 * records, the bulk of the log, are skipped by their first bytes).
 */
export function openQuizEpisodes(logPath: string, opts: { now?: number; liveEpisode?: number } = {}): Set<number> {
  const now = opts.now ?? Date.now();
  const open = new Map<number, QuizOpenRecord>();
  for (const record of quizRecords(logPath)) {
    if (typeof record.episode !== "number") continue;
    if (record.kind === QUIZ_OPEN) open.set(record.episode, record as unknown as QuizOpenRecord);
    else if (record.kind === QUIZ_CLOSED) open.delete(record.episode);
  }
  const out = new Set<number>();
  for (const [episode, r] of open) {
    if (r.server === SERVER_INSTANCE || now < r.deadline || episode === opts.liveEpisode) out.add(episode);
  }
  return out;
}

/** The `room_quiz_open` and `room_quiz` records of a log, in order (a torn last line skipped). */
function quizRecords(logPath: string): { kind: string; episode?: unknown }[] {
  let fd: number;
  try {
    fd = openSync(logPath, "r");
  } catch {
    return [];
  }
  let buf: Buffer;
  try {
    const size = fstatSync(fd).size;
    buf = Buffer.allocUnsafe(size);
    for (let at = 0; at < size; ) {
      const n = readSync(fd, buf, at, size - at, at);
      if (n === 0) {
        buf = buf.subarray(0, at);
        break;
      }
      at += n;
    }
  } finally {
    closeSync(fd);
  }
  const out: { kind: string; episode?: unknown }[] = [];
  for (let at = buf.indexOf(LINE_START); at >= 0; at = buf.indexOf(LINE_START, at + 1)) {
    if (at > 0 && buf[at - 1] !== 0x0a) continue;
    const end = buf.indexOf(0x0a, at);
    if (end < 0) break;
    try {
      out.push(JSON.parse(buf.toString("utf8", at, end)) as { kind: string; episode?: unknown });
    } catch {
      // A damaged line: the page reader reports it; it opens or closes nothing.
    }
  }
  return out;
}

/** What a client is shown of an episode's record while its quiz is open. */
export function withheldRecord(record: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const k of ["kind", "run", "room", "world", "episode", "end"]) if (k in record) shown[k] = record[k];
  return { ...shown, withheld: `episode ${String(record.episode)}'s quiz is open: its record is shown when the quiz closes` };
}

/** Whether a log record is an episode's record whose quiz is open. */
export function isWithheld(record: unknown, open: ReadonlySet<number>): boolean {
  if (open.size === 0 || record === null || typeof record !== "object") return false;
  const r = record as { kind?: unknown; episode?: unknown };
  return r.kind === "room_episode" && typeof r.episode === "number" && open.has(r.episode);
}
