/**
 * The command line's progress bar (cli/progress.ts): on a terminal, redrawn in place and cut to
 * the terminal's width (a wrapped line left a copy of its first rows at every redraw); in a log,
 * a line every tenth; the last line in full either way.
 */
import { describe, expect, it } from "vitest";
import { Progress } from "../../cli/progress.js";

function stream(isTTY: boolean, columns?: number): NodeJS.WriteStream & { out: string[] } {
  const out: string[] = [];
  return { isTTY, columns, out, write: (s: string) => (out.push(s), true) } as unknown as NodeJS.WriteStream & { out: string[] };
}

describe("the command line's progress bar", () => {
  it("redraws one terminal row, cut to the terminal's width, and ends with the whole line", () => {
    const s = stream(true, 50);
    const p = new Progress("bench tomi", 10, s);
    p.update(5, "accuracy 80.0% on the questions answered so far");
    expect(s.out).toHaveLength(1);
    const drawn = s.out[0]!;
    expect(drawn.startsWith("\r")).toBe(true);
    expect(drawn.endsWith("\x1b[K")).toBe(true);
    const row = drawn.slice(1, -3);
    expect(row.length).toBeLessThan(50);
    expect(row.endsWith("…")).toBe(true);
    expect(row).toMatch(/^bench tomi █{14}░{14} 5\/10 50%/);
    p.update(10);
    p.finish("accuracy 90.0%");
    expect(s.out.at(-1)).toMatch(/^\rbench tomi █{28} 10\/10 100% .* accuracy 90\.0%\x1b\[K\n$/);
  });

  it("leaves a short line as it is on a wide terminal", () => {
    const s = stream(true, 200);
    new Progress("gen", 4, s).update(1, "ok");
    expect(s.out[0]).toMatch(/^\rgen █{7}░{21} 1\/4 25% \S+\/s( eta \S+)? ok\x1b\[K$/);
  });

  it("writes a line every tenth to a log (no terminal), not every update", () => {
    const s = stream(false);
    const p = new Progress("audit", 100, s);
    for (let i = 1; i <= 100; i++) p.update(i);
    p.finish();
    expect(s.out).toHaveLength(11);
    expect(s.out.map((l) => /(\d+)\/100/.exec(l)![1])).toEqual(["1", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100"]);
  });
});
