/** What a resumed GRPO run does to its log before sampling the steps after its checkpoint again. */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readEpisodeLog } from "../../store/episode-log.js";
import { supersedeAfter } from "../../trainers/grpo/session.js";

const line = (step: number, context?: string) =>
  JSON.stringify({ turns: [{ info: { grpo: { step } } }], ...(context ? { context_id: context, socialized_context: {} } : {}) });

describe("supersedeAfter", () => {
  it("moves the records after the checkpoint's step aside, and a line cut off by a crash to .torn", () => {
    const path = join(mkdtempSync(join(tmpdir(), "sw-supersede-")), "episodes.jsonl");
    const torn = line(4).slice(0, 25);
    writeFileSync(path, [line(1, "c1"), line(2), line(3, "c3"), line(4)].join("\n") + "\n" + torn);
    expect(supersedeAfter(path, 2)).toEqual(["c1"]);
    expect(readEpisodeLog(path)).toMatchObject({ total: 2, torn: false });
    expect(readFileSync(path.replace(/\.jsonl$/, ".superseded.jsonl"), "utf8")).toBe(line(3, "c3") + "\n" + line(4) + "\n");
    expect(readFileSync(`${path}.torn`, "utf8")).toBe(torn + "\n");
  });

  it("stops at a damaged line before the end instead of dropping it", () => {
    const path = join(mkdtempSync(join(tmpdir(), "sw-supersede-")), "episodes.jsonl");
    const text = [line(1), "{not json", line(3)].join("\n") + "\n";
    writeFileSync(path, text);
    expect(() => supersedeAfter(path, 1)).toThrow(`${path}:2: not valid JSON`);
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(existsSync(path.replace(/\.jsonl$/, ".superseded.jsonl"))).toBe(false);
  });
});
