/**
 * Append-only JSONL episode logs. Each record is one line written by a single write(2) on a file
 * opened for appending, so a crash loses at most the line being written; readers skip a torn last
 * line and say so, and a log opened again (a resumed run) first sets that line aside. Logs are
 * flushed to disk when closed.
 */
import { appendFileSync, closeSync, constants, copyFileSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { DataError } from "../worlds/core/errors.js";
import { naming, withPath } from "./io-error.js";
import { replaceFile } from "./write-atomic.js";
import { checkWrite } from "./write-fence.js";

export class EpisodeLog {
  private fd: number | undefined;
  private lines = 0;
  /** Reused for every line, so a long run does not allocate a byte buffer per record. */
  private buffer = Buffer.allocUnsafe(64 * 1024);
  /** Bytes of a torn last line found on opening, moved to `${path}.torn` (0 when there was none). */
  readonly tornBytes: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, "a+");
    this.tornBytes = setTornLineAside(this.fd, path);
  }

  append(record: unknown): void {
    if (this.fd === undefined) throw new Error(`episode log ${this.path} is closed`);
    const json = JSON.stringify(record);
    // Room for the UTF-8 bytes (at most 3 per UTF-16 unit) and the newline, without copying the
    // JSON into a new string to append "\n".
    if (json.length * 3 + 1 > this.buffer.length) this.buffer = Buffer.allocUnsafe(Math.max(json.length * 3 + 1, 2 * this.buffer.length));
    const n = this.buffer.write(json, 0, "utf8");
    this.buffer[n] = 0x0a;
    // In the step that writes: a process that may have been declared dead by its group (paused past
    // its lease) writes nothing into a log that the room's new home now writes (write-fence.ts).
    checkWrite(this.path);
    // One write(2) per line: a crash loses at most the line being written.
    let done = 0;
    try {
      while (done < n + 1) done += writeSync(this.fd, this.buffer, done, n + 1 - done);
    } catch (err) {
      throw withPath(err, this.path);
    }
    this.lines++;
  }

  get written(): number {
    return this.lines;
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fsyncSync(this.fd);
    } catch (err) {
      throw withPath(err, this.path);
    } finally {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

export interface LogRead<T> {
  readonly records: T[];
  /** Complete records in the file (all of them, whatever part was read). */
  readonly total: number;
  /** True when the last line was cut off mid-write (skipped). */
  readonly torn: boolean;
}

/**
 * Reads every record of a JSONL log. A record is whole only with its newline (the writer writes
 * both in one write), so a last line without one is torn, as the log index and a reopened log take
 * it; a malformed line before it is an error.
 */
export function readEpisodeLog<T = unknown>(path: string): LogRead<T> {
  if (!existsSync(path)) return { records: [], total: 0, torn: false };
  const lines = readFileSync(path, "utf8").split("\n");
  // After the last newline: nothing, or the torn start of a record.
  const torn = lines.pop() !== "";
  const records = lines.map((line, i) => {
    try {
      return JSON.parse(line) as T;
    } catch {
      throw new DataError(path, { line: i + 1 }, "not valid JSON");
    }
  });
  return { records, total: records.length, torn };
}

/**
 * A crash mid-write leaves the log ending in part of a line. Appending after it would glue the next
 * record onto that part and spoil both, so the part is moved to `${path}.torn` (kept, not deleted)
 * and the log is cut back to its last whole line. Returns how many bytes were moved.
 */
function setTornLineAside(fd: number, path: string): number {
  const size = fstatSync(fd).size;
  const start = lastLineStart(fd, size);
  if (start === size) return 0;
  const torn = Buffer.allocUnsafe(size - start);
  readSync(fd, torn, 0, torn.length, start);
  checkWrite(path);
  naming(`${path}.torn`, () => appendFileSync(`${path}.torn`, Buffer.concat([torn, Buffer.from("\n")])));
  ftruncateSync(fd, start);
  return torn.length;
}

/**
 * A log whose last writer may still be alive somewhere is taken up as a new file: the same bytes
 * under the same name, in a new inode. A process of a group declared dead while it was paused
 * (docs/scale.md) still holds the log open when it wakes; whatever it writes through that
 * descriptor before it learns that it is dead lands in the file it had, which nobody reads any
 * more, never after the records of the room's new home. Called before the log is read to take its
 * room up (EpisodeRoom.takeUp, a benchmark room's resume).
 */
export function takeOverLog(path: string): void {
  if (!existsSync(path)) return;
  // A clone where the file system can (one extent map, no bytes copied), a copy elsewhere.
  replaceFile(path, (tmp) => copyFileSync(path, tmp, constants.COPYFILE_FICLONE));
}

/** The same for a log that is not open (a resumed run does this before rewriting its log). */
export function setTornLineAsideIn(path: string): number {
  if (!existsSync(path)) return 0;
  const fd = openSync(path, "r+");
  try {
    return setTornLineAside(fd, path);
  } finally {
    closeSync(fd);
  }
}

/** Where the file's last line starts: just after its last newline (0 if it has none). */
function lastLineStart(fd: number, size: number): number {
  // Read backwards a block at a time: a log can be large, and a torn line is at most one record.
  const block = Buffer.allocUnsafe(64 * 1024);
  for (let end = size; end > 0; ) {
    const from = Math.max(0, end - block.length);
    const n = readSync(fd, block, 0, end - from, from);
    const nl = block.lastIndexOf(0x0a, n - 1);
    if (nl >= 0) return from + nl + 1;
    end = from;
  }
  return 0;
}

/**
 * Fills in `socialized_context` on records that name it by `context_id` only (benchmark logs
 * write each story's context once). Needs the earlier records of the same log.
 */
export function resolveContexts<T extends { context_id?: string; socialized_context?: unknown }>(
  records: readonly T[],
  earlier: readonly T[] = [],
): T[] {
  const byId = new Map<string, unknown>();
  for (const r of [...earlier, ...records]) if (r.context_id && r.socialized_context) byId.set(r.context_id, r.socialized_context);
  return records.map((r) => (r.socialized_context || !r.context_id || !byId.has(r.context_id) ? r : { ...r, socialized_context: byId.get(r.context_id) }));
}
