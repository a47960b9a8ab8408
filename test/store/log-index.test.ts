/**
 * Pages of an episode log read through its index equal what reading the whole log and resolving
 * its contexts gives, as the log grows, is torn, is rewritten, or holds lines longer than a read.
 */
import { appendFileSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { readEpisodeLog, resolveContexts } from "../../store/episode-log.js";
import { readLogPage } from "../../store/log-index.js";
import { RunStore } from "../../store/run-store.js";
import { generateTomi } from "../../worlds/tomi/generator.js";

const io = captureOutput();

type Rec = { context_id?: string; socialized_context?: unknown };

/** The reference: the whole log read, the page sliced, its contexts resolved from the lines before it. */
function reference(path: string, offset: number, limit: number) {
  const all = readEpisodeLog<Rec>(path);
  return { records: resolveContexts(all.records.slice(offset, offset + limit), all.records.slice(0, offset)), total: all.total, torn: all.torn };
}

async function benchLog(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "sw-log-index-"));
  const g = await generateTomi(30, 8);
  writeFileSync(join(dir, "g.txt"), g.txt);
  writeFileSync(join(dir, "g.trace"), g.trace);
  expect(await main(["bench", "tomi", "--data", join(dir, "g.txt"), "--store", join(dir, "store"), "--quiet"])).toBe(0);
  const store = await RunStore.open(join(dir, "store"));
  return store.episodesPath(store.list()[0]!);
}

describe("readLogPage", () => {
  it("gives every page of a benchmark log as the whole-log reading does", async () => {
    const path = await benchLog();
    expect(readEpisodeLog(path).total).toBe(30);
    for (const limit of [1, 4, 7, 30, 100]) {
      for (let offset = 0; offset <= 31; offset++) expect(readLogPage(path, offset, limit), `${offset}+${limit}`).toEqual(reference(path, offset, limit));
    }
    // Unresolved, the records are the lines as written.
    expect(readLogPage(path, 0, Infinity, { resolve: false }).records).toEqual(readEpisodeLog(path).records);
  });

  it("follows the log as it grows, is torn, and is cut back or replaced", async () => {
    const path = await benchLog();
    const text = readFileSync(path, "utf8");
    const lines = text.split("\n").slice(0, -1);
    writeFileSync(path, lines.slice(0, 10).join("\n") + "\n");
    expect(readLogPage(path, 0, 5)).toEqual(reference(path, 0, 5));
    appendFileSync(path, lines.slice(10, 20).join("\n") + "\n" + lines[20]!.slice(0, 50));
    expect(readLogPage(path, 8, 5)).toMatchObject({ total: 20, torn: true });
    expect(readLogPage(path, 8, 5)).toEqual(reference(path, 8, 5));
    appendFileSync(path, lines[20]!.slice(50) + "\n");
    expect(readLogPage(path, 18, 5)).toEqual({ ...reference(path, 18, 5), torn: false, total: 21 });
    // Cut back (a torn line set aside), then replaced whole (a rewrite through a new file).
    writeFileSync(path, lines.slice(0, 3).join("\n") + "\n");
    expect(readLogPage(path, 0, 10)).toEqual(reference(path, 0, 10));
    writeFileSync(`${path}.new`, lines.slice(5, 25).join("\n") + "\n");
    renameSync(`${path}.new`, path);
    expect(readLogPage(path, 0, 30)).toEqual(reference(path, 0, 30));
  });

  it("runs episodes prints a log of several pages line for line, and any window of it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-log-index-"));
    const store = await RunStore.open(join(dir, "store"));
    const run = await store.create("bench", "many lines", {});
    const lines = Array.from({ length: 2500 }, (_, i) => JSON.stringify({ kind: "benchmark_item", n: i, context_id: `c${i % 7}` }));
    writeFileSync(store.episodesPath(run), lines.join("\n") + "\n");
    const printed = async (...extra: string[]) => {
      io.out = "";
      expect(await main(["runs", "episodes", run.id, "--store", join(dir, "store"), ...extra])).toBe(0);
      return io.out;
    };
    expect(await printed()).toBe(lines.join("\n") + "\n");
    expect(await printed("--offset", "999", "--limit", "1002")).toBe(lines.slice(999, 2001).join("\n") + "\n");
    expect(await printed("--offset", "2600")).toBe("");
  });

  it("reads lines longer than one read of the file, and names a damaged line of its page", () => {
    const path = join(mkdtempSync(join(tmpdir(), "sw-log-index-")), "episodes.jsonl");
    const big = "x".repeat(3 << 20);
    const recs = [
      { context_id: "c1", socialized_context: { text: big } },
      { context_id: "c1", n: 1 },
      { context_id: "c2", socialized_context: { text: "small" }, pad: big },
      { context_id: "c2", n: 2 },
    ];
    writeFileSync(path, recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
    expect(readLogPage(path, 1, 3)).toEqual(reference(path, 1, 3));
    appendFileSync(path, '{"n": \n{"n": 6}\n');
    expect(readLogPage(path, 0, 4).total).toBe(6);
    expect(() => readLogPage(path, 3, 2)).toThrow(`${path}:5: not valid JSON`);
  });
});
