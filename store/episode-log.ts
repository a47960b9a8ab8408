/**
 * Append-only JSONL episode logs. Each record is one line written by a single write(2) on a file
 * opened for appending, so a crash loses at most the line being written; readers skip a torn last
 * line and say so. Logs are flushed to disk when closed.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";

export class EpisodeLog {
  private fd: number | undefined;
  private lines = 0;
  /** Reused for every line, so a long run does not allocate a byte buffer per record. */
  private buffer = Buffer.allocUnsafe(64 * 1024);

  constructor(readonly path: string) {
    this.fd = openSync(path, "a");
  }

  append(record: unknown): void {
    if (this.fd === undefined) throw new Error(`episode log ${this.path} is closed`);
    const json = JSON.stringify(record);
    // Room for the UTF-8 bytes (at most 3 per UTF-16 unit) and the newline, without copying the
    // JSON into a new string to append "\n".
    if (json.length * 3 + 1 > this.buffer.length) this.buffer = Buffer.allocUnsafe(Math.max(json.length * 3 + 1, 2 * this.buffer.length));
    const n = this.buffer.write(json, 0, "utf8");
    this.buffer[n] = 0x0a;
    // One write(2) per line: a crash loses at most the line being written.
    let done = 0;
    while (done < n + 1) done += writeSync(this.fd, this.buffer, done, n + 1 - done);
    this.lines++;
  }

  get written(): number {
    return this.lines;
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

export interface LogRead<T> {
  readonly records: T[];
  /** Total complete records in the file (before offset/limit). */
  readonly total: number;
  /** True when the last line was cut off mid-write (skipped). */
  readonly torn: boolean;
}

/** Reads records [offset, offset+limit) of a JSONL log; a malformed line other than the last is an error. */
export function readEpisodeLog<T = unknown>(path: string, opts: { offset?: number; limit?: number } = {}): LogRead<T> {
  if (!existsSync(path)) return { records: [], total: 0, torn: false };
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n");
  const endsClean = text.endsWith("\n") || text === "";
  if (lines[lines.length - 1] === "") lines.pop();
  const offset = opts.offset ?? 0;
  const limit = opts.limit ?? Infinity;
  const records: T[] = [];
  let total = 0;
  let torn = false;
  for (let i = 0; i < lines.length; i++) {
    const last = i === lines.length - 1;
    let value: T;
    try {
      value = JSON.parse(lines[i]!) as T;
    } catch {
      if (last && !endsClean) {
        torn = true;
        break;
      }
      throw new Error(`${path}:${i + 1}: not valid JSON`);
    }
    if (total >= offset && records.length < limit) records.push(value);
    total++;
  }
  return { records, total, torn };
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
