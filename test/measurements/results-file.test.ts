/**
 * The measurement scripts' results (measurements/results-file.ts): the text to OUT/results.md and
 * to the terminal, the plots beside it, and the load average line.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAverageLine, writeResults } from "../../measurements/results-file.js";
import { captureOutput } from "../capture.js";
import { tempDir } from "../policy/fixtures.js";

const io = captureOutput();

describe("a script's results", () => {
  it("writes the text to OUT/results.md and the plots beside it, and prints the text", () => {
    const out = tempDir("sw-results-file-");
    const text = "| a | b |\n|--:|--:|\n| 1 | 2 |\n";
    writeResults(out, text, { "curve.svg": "<svg/>" });
    expect(readFileSync(join(out, "results.md"), "utf8")).toBe(text);
    expect(readFileSync(join(out, "curve.svg"), "utf8")).toBe("<svg/>");
    expect(readdirSync(out).sort()).toEqual(["curve.svg", "results.md"]);
    expect(io.out).toBe("\n" + text);
  });

  it("gives the load average at the start and at the end, one decimal", () => {
    expect(loadAverageLine([9.04, 5.25, 1], [2, 3.96, 4.5])).toBe("Load average (1, 5, 15 min): 9.0, 5.3, 1.0 at the start, 2.0, 4.0, 4.5 at the end.");
    expect(loadAverageLine([1, 2, 3])).toMatch(/^Load average \(1, 5, 15 min\): 1\.0, 2\.0, 3\.0 at the start, \d+\.\d, \d+\.\d, \d+\.\d at the end\.$/);
  });
});
