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
import { closeSync, fstatSync, openSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { readRange } from "../../store/log-index.js";

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
 * is playing, if it is live; `liveServer`: the server instance of the process of the group playing
 * it (another process's quizzes stay open while that process runs, as this one's do).
 */
export function openQuizEpisodes(logPath: string, opts: { now?: number; liveEpisode?: number; liveServer?: string } = {}): Set<number> {
  const now = opts.now ?? Date.now();
  const out = new Set<number>();
  for (const [episode, r] of openRecords(logPath)) {
    if (r.server === SERVER_INSTANCE || r.server === opts.liveServer || now < r.deadline || episode === opts.liveEpisode) out.add(episode);
  }
  return out;
}

/** Whether the log opened `episode`'s quiz and never closed it (a room killed during that quiz). */
export function quizLeftOpen(logPath: string, episode: number): boolean {
  return openRecords(logPath).has(episode);
}

/** How far a log has been read, and the quizzes it leaves open. */
interface Scan {
  ino: number;
  /** Where the last complete line read ends (after its newline). */
  end: number;
  readonly open: Map<number, QuizOpenRecord>;
}

/**
 * Each log is read once, then only what was appended since (every page of the runs API asks), and
 * only the quiz records' lines are parsed: the episodes' records, the bulk of a log, are skipped
 * by their first bytes. A log replaced or cut back is read again from the start.
 */
const scans = new Map<string, Scan>();

function openRecords(logPath: string): ReadonlyMap<number, QuizOpenRecord> {
  let fd: number;
  try {
    fd = openSync(logPath, "r");
  } catch {
    scans.delete(logPath);
    return new Map();
  }
  try {
    const { size, ino } = fstatSync(fd);
    let scan = scans.get(logPath);
    if (!scan || scan.ino !== ino || size < scan.end || (scan.end > 0 && readRange(fd, scan.end - 1, scan.end)[0] !== 0x0a)) {
      scan = { ino, end: 0, open: new Map() };
      scans.set(logPath, scan);
    }
    if (size > scan.end) {
      const buf = readRange(fd, scan.end, size);
      // Up to the last newline: a line still being written is read with the next call.
      const complete = buf.subarray(0, buf.lastIndexOf(0x0a) + 1);
      applyQuizLines(complete, scan.open);
      scan.end += complete.length;
    }
    return scan.open;
  } finally {
    closeSync(fd);
  }
}

/** Opens and closes quizzes by the `room_quiz_open` and `room_quiz` lines of `buf` (whole lines). */
function applyQuizLines(buf: Buffer, open: Map<number, QuizOpenRecord>): void {
  for (let at = buf.indexOf(LINE_START); at >= 0; at = buf.indexOf(LINE_START, at + 1)) {
    if (at > 0 && buf[at - 1] !== 0x0a) continue;
    const end = buf.indexOf(0x0a, at);
    let record: { kind?: unknown; episode?: unknown };
    try {
      record = JSON.parse(buf.toString("utf8", at, end)) as typeof record;
    } catch {
      // A damaged line: the page reader reports it; it opens or closes nothing.
      continue;
    }
    if (typeof record.episode !== "number") continue;
    if (record.kind === QUIZ_OPEN) open.set(record.episode, record as unknown as QuizOpenRecord);
    else if (record.kind === QUIZ_CLOSED) open.delete(record.episode);
  }
}

/** What a client is shown of an episode's record while its quiz is open. */
export function withheldRecord(record: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const k of ["kind", "run", "room", "world", "episode", "end"]) if (k in record) shown[k] = record[k];
  return { ...shown, withheld: `episode ${String(record.episode)}'s quiz is open: its record is shown when the quiz closes` };
}

/** Whether a log record is a `room_quiz_open` record (bookkeeping, never listed as an episode). */
export function isQuizOpening(record: unknown): boolean {
  return record !== null && typeof record === "object" && (record as { kind?: unknown }).kind === QUIZ_OPEN;
}

/** Whether a log record is an episode's record whose quiz is open. */
export function isWithheld(record: unknown, open: ReadonlySet<number>): boolean {
  if (open.size === 0 || record === null || typeof record !== "object") return false;
  const r = record as { kind?: unknown; episode?: unknown };
  return r.kind === "room_episode" && typeof r.episode === "number" && open.has(r.episode);
}
