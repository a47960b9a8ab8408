/**
 * A progress bar on stderr: redrawn in place on a terminal, a line every 10% otherwise (CI logs),
 * silent when disabled.
 */
export class Progress {
  private readonly started = performance.now();
  private lastDraw = 0;
  private lastDecile = -1;
  private done = 0;
  private note: string | (() => string) = "";

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream | null = process.stderr,
    /** "bytes": counts and rate shown in kB/MB (a download). */
    private readonly unit: "items" | "bytes" = "items",
  ) {}

  /** `note` may be a function: called only when a line is drawn (a run of thousands of items draws a few). */
  update(done: number, note: string | (() => string) = ""): void {
    this.done = done;
    this.note = note;
    if (!this.stream) return;
    const now = performance.now();
    if (this.stream.isTTY) {
      if (now - this.lastDraw < 80 && done < this.total) return;
      this.lastDraw = now;
      this.stream.write(`\r${this.fitted()}\x1b[K`);
    } else {
      const decile = this.total ? Math.floor((10 * done) / this.total) : 10;
      if (decile !== this.lastDecile && done < this.total) {
        this.lastDecile = decile;
        this.stream.write(this.line() + "\n");
      }
    }
  }

  finish(note: string | (() => string) = this.note): void {
    this.note = note;
    if (!this.stream) return;
    // In full: the last line stays on screen, and nothing redraws it.
    this.stream.write(this.stream.isTTY ? `\r${this.line()}\x1b[K\n` : this.line() + "\n");
  }

  /**
   * The line cut to the terminal's width: a longer one wraps, and the carriage return then redraws
   * only its last row, leaving a new copy of the others on screen at every update.
   */
  private fitted(): string {
    const line = this.line();
    const columns = this.stream?.columns;
    return columns && line.length >= columns ? `${line.slice(0, Math.max(0, columns - 2))}…` : line;
  }

  private line(): string {
    const frac = this.total ? this.done / this.total : 1;
    const width = 28;
    const filled = Math.round(frac * width);
    const bar = "█".repeat(filled) + "░".repeat(width - filled);
    const secs = (performance.now() - this.started) / 1000;
    const rate = secs > 0 ? this.done / secs : 0;
    const eta = rate > 0 && this.done < this.total ? ` eta ${fmtSecs((this.total - this.done) / rate)}` : "";
    const text = typeof this.note === "function" ? this.note() : this.note;
    const note = text ? ` ${text}` : "";
    const count = this.unit === "bytes" ? `${fmtBytes(this.done)}/${fmtBytes(this.total)}` : `${this.done}/${this.total}`;
    const speed = this.unit === "bytes" ? fmtBytes(rate) : fmtRate(rate);
    return `${this.label} ${bar} ${count} ${(100 * frac).toFixed(0)}% ${speed}/s${eta}${note}`;
  }
}

function fmtSecs(s: number): string {
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${Math.round(s - 60 * m)
    .toString()
    .padStart(2, "0")}s`;
}

function fmtRate(r: number): string {
  return r >= 1000 ? `${(r / 1000).toFixed(1)}k` : r.toFixed(r < 10 ? 1 : 0);
}

export function fmtBytes(n: number): string {
  if (n < 1000) return `${Math.round(n)} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)} kB`;
  return `${(n / 1e6).toFixed(n < 1e7 ? 2 : 1)} MB`;
}
