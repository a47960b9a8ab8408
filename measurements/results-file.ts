/**
 * A measurement script's results: its text (the tables, the wall time, the load average) written
 * to OUT/results.md, its plots beside it, and the same text printed to the terminal.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";

/** Writes `text` to OUT/results.md and each plot (file name -> SVG) to OUT, then prints the text. */
export function writeResults(out: string, text: string, plots: Readonly<Record<string, string>> = {}): void {
  writeFileSync(join(out, "results.md"), text);
  for (const [name, svg] of Object.entries(plots)) writeFileSync(join(out, name), svg);
  process.stdout.write("\n" + text);
}

/** The results' line of the machine's load (1, 5 and 15 minutes) when the script started (`start`, loadavg()'s) and now. */
export function loadAverageLine(start: readonly number[], end: readonly number[] = loadavg()): string {
  const fmt = (l: readonly number[]) => l.map((x) => x.toFixed(1)).join(", ");
  return `Load average (1, 5, 15 min): ${fmt(start)} at the start, ${fmt(end)} at the end.`;
}
