/**
 * A page of a large episode log without reading the rest of it: one pass over the log's bytes
 * finds where each line starts and which lines carry a story's socialized context (benchmark logs
 * write each context once and name it by id on later lines); later reads extend the index over
 * what was appended since. A page then parses only its own lines and the contexts they name.
 *
 * A log replaced or cut back (a resumed run sets a torn line aside, a resumed GRPO run rewrites
 * its log) is indexed again from the start.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { DataError } from "../worlds/core/errors.js";
import type { LogRead } from "./episode-log.js";

const CHUNK = 1 << 20;
const CONTEXT_KEY = Buffer.from('"socialized_context":');

type Record_ = { context_id?: string; socialized_context?: unknown };

class LogIndex {
  /** Byte offset of each complete line; `end` is where the last one ends (after its newline). */
  private readonly starts: number[] = [];
  private end = 0;
  private inode = -1;
  private size = 0;
  /** The line holding each story's socialized context, by context id. */
  private readonly contexts = new Map<string, number>();

  constructor(readonly path: string) {}

  get total(): number {
    return this.starts.length;
  }

  get torn(): boolean {
    return this.size > this.end;
  }

  /** Brings the index up to the file as it is now (an open descriptor, so one file throughout). */
  update(fd: number): void {
    const st = fstatSync(fd);
    // Another file, one cut back, or one rewritten in place (its last indexed line no longer ends
    // where it did): index it again.
    if (st.ino !== this.inode || st.size < this.end || (this.end > 0 && readRange(fd, this.end - 1, this.end)[0] !== 0x0a)) this.reset(st.ino);
    this.size = st.size;
    if (st.size === this.end) return;
    const buf = Buffer.allocUnsafe(CHUNK);
    let lineStart = this.end;
    // From the end of the last complete line, a chunk at a time; a line may span chunks.
    for (let pos = this.end; pos < st.size; ) {
      const n = readSync(fd, buf, 0, Math.min(CHUNK, st.size - pos), pos);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, nl + 1)) {
        const lineEnd = pos + nl;
        // The line's bytes: in this chunk, or read again when it began in an earlier one.
        const bytes = lineStart >= pos ? chunk.subarray(lineStart - pos, nl) : readRange(fd, lineStart, lineEnd);
        this.addLine(lineStart, lineEnd + 1, bytes);
        lineStart = lineEnd + 1;
      }
      pos += n;
    }
  }

  /** Lines [from, to), parsed; a line that is not JSON is an error naming it. */
  read<T>(fd: number, from: number, to: number): T[] {
    if (from >= to) return [];
    const start = this.starts[from]!;
    const stop = to < this.starts.length ? this.starts[to]! : this.end;
    const text = readRange(fd, start, stop).toString("utf8");
    const lines = text.split("\n");
    lines.pop();
    return lines.map((line, i) => parseLine<T>(line, this.path, from + i + 1));
  }

  /** The socialized context a record names by id, from the line that carries it. */
  context(fd: number, id: string): unknown {
    const line = this.contexts.get(id);
    if (line === undefined) return undefined;
    return this.read<Record_>(fd, line, line + 1)[0]?.socialized_context;
  }

  private reset(inode: number): void {
    this.starts.length = 0;
    this.contexts.clear();
    this.end = 0;
    this.inode = inode;
  }

  private addLine(start: number, end: number, bytes: Buffer): void {
    const line = this.starts.length;
    this.starts.push(start);
    this.end = end;
    // Only a line with a context (a record without one omits the key) is parsed, to learn its id.
    if (bytes.indexOf(CONTEXT_KEY) < 0) return;
    const rec = parseLine<Record_>(bytes.toString("utf8"), this.path, line + 1);
    if (typeof rec.context_id === "string" && rec.socialized_context && !this.contexts.has(rec.context_id)) this.contexts.set(rec.context_id, line);
  }
}

/** Bytes `start` to `end` of an open file (fewer if it ends first). */
export function readRange(fd: number, start: number, end: number): Buffer {
  const buf = Buffer.allocUnsafe(end - start);
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, start + done);
    if (n === 0) break;
    done += n;
  }
  return buf.subarray(0, done);
}

function parseLine<T>(line: string, path: string, lineNo: number): T {
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new DataError(path, { line: lineNo }, "not valid JSON");
  }
}

/** Indexes of recently read logs (a server pages through a few at a time). */
const indexes = new Map<string, LogIndex>();
const KEPT = 16;

/**
 * Records [offset, offset+limit) of a log, each with the socialized context it names filled in
 * (as resolveContexts does, without reading the lines in between) unless `resolve` is false.
 */
export function readLogPage<T extends Record_>(path: string, offset: number, limit: number, opts: { resolve?: boolean } = {}): LogRead<T> {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { records: [], total: 0, torn: false };
    throw err;
  }
  try {
    let index = indexes.get(path);
    if (index) indexes.delete(path);
    else index = new LogIndex(path);
    indexes.set(path, index);
    if (indexes.size > KEPT) indexes.delete(indexes.keys().next().value!);
    index.update(fd);
    const from = Math.min(offset, index.total);
    const records = index.read<T>(fd, from, Math.min(index.total, from + limit)).map((r) => {
      if (opts.resolve === false || r.socialized_context || !r.context_id) return r;
      const context = index.context(fd, r.context_id);
      return context === undefined ? r : { ...r, socialized_context: context };
    });
    return { records, total: index.total, torn: index.torn };
  } finally {
    closeSync(fd);
  }
}
