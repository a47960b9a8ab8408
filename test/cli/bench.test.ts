import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { readEpisodeLog, resolveContexts } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { generateTomi } from "../../worlds/tomi/generator.js";

const io = captureOutput();

async function fixture() {
  const dir = mkdtempSync(join(tmpdir(), "sw-cli-"));
  const files = await generateTomi(30, 5);
  writeFileSync(join(dir, "g.txt"), files.txt);
  writeFileSync(join(dir, "g.trace"), files.trace);
  return dir;
}

describe("socialworld bench", () => {
  it("prints the table, writes JSON and Markdown reports, logs every question and registers the run", async () => {
    const dir = await fixture();
    const code = await main(["bench", "tomi", "--data", join(dir, "g.txt"), "--agent", "simulation", "--json", join(dir, "r.json"), "--md", join(dir, "r.md"), "--store", join(dir, "store"), "--quiet"]);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(report).toMatchObject({ benchmark: "tomi", agent: "simulation", mode: "vanilla", total: 30, correct: 30, accuracy: 1 });
    expect(report.byType.memory).toEqual({ total: 5, correct: 5, accuracy: 1 });
    expect(io.out).toContain("| question type");
    expect(readFileSync(join(dir, "r.md"), "utf8")).toBe(io.out);
    const store = await RunStore.open(join(dir, "store"));
    const [run] = store.list();
    expect(run).toMatchObject({ kind: "bench", status: "done", summary: { total: 30, correct: 30 } });
    const log = readEpisodeLog<{ context_id: string; socialized_context?: { agents_names: string[] }; turns: unknown[] }>(store.episodesPath(run!));
    expect(log.total).toBe(30);
    // Each story's context is written once, and every record resolves to it.
    expect(log.records.filter((r) => r.socialized_context)).toHaveLength(5);
    expect(resolveContexts(log.records).every((r) => r.socialized_context?.agents_names.length)).toBe(true);
  });

  it("fails on bad input with the file and line, and writes no report", async () => {
    const dir = await fixture();
    const text = readFileSync(join(dir, "g.txt"), "utf8").split("\n");
    writeFileSync(join(dir, "g.txt"), text.slice(0, 12).join("\n"));
    const code = await main(["bench", "tomi", "--data", join(dir, "g.txt"), "--json", join(dir, "r.json"), "--store", join(dir, "store"), "--quiet"]);
    expect(code).toBe(2);
    expect(io.err).toMatch(/bad input: .*g\.(txt|trace):\d+: /);
    expect(existsSync(join(dir, "r.json"))).toBe(false);
  });

  it("explains a usage error", async () => {
    expect(await main(["bench", "nosuch", "--data", "x"])).toBe(2);
    expect(io.err).toContain("expected one of tomi");
    process.env.SOCIALWORLD_BENCHMARKS = join(tmpdir(), "sw-nosuch-benchmarks");
    expect(await main(["bench", "tomi"])).toBe(2);
    delete process.env.SOCIALWORLD_BENCHMARKS;
    expect(io.err).toContain("--data: not given, and");
    expect(await main(["bench", "tomi", "--data", "x.txt", "--context", "full"])).toBe(2);
    expect(io.err).toContain("--context does not apply to tomi (it applies to fantom, social)");
    expect(await main(["bench", "fantom", "--data", "x.json", "--embedder", "bert"])).toBe(2);
    expect(io.err).toContain("--embedder: expected lexical or onnx:DIR");
    // An ONNX embedder folder is checked before a run exists (it failed the run at its first question).
    const empty = mkdtempSync(join(tmpdir(), "sw-cli-"));
    const store = join(empty, "store");
    expect(await main(["bench", "fantom", "--data", "x.json", "--embedder", `onnx:${join(empty, "nosuch")}`, "--store", store])).toBe(2);
    expect(io.err).toContain(`socialworld bench: --embedder: embedder folder not found: ${join(empty, "nosuch")}`);
    expect(await main(["bench", "fantom", "--data", "x.json", "--embedder", `onnx:${empty}`, "--store", store])).toBe(2);
    expect(io.err).toContain(`--embedder: no model.onnx or onnx/model.onnx in ${empty}`);
    expect(existsSync(store)).toBe(false);
    expect(await main(["bench", "tomi", "--data", "x.txt", "--agent", "random:abc"])).toBe(2);
    expect(io.err).toContain('socialworld bench: --agent: random:SEED needs an integer seed (got "random:abc")');
    expect(await main(["bench", "tomi", "--data", "x.txt", "--agent", "llm:m@not-a-url"])).toBe(2);
    expect(io.err).toContain('socialworld bench: --agent: llm:m@not-a-url: "not-a-url" is not a URL');
  });

  it("checks where it will write before it runs: folders made, a folder or a file in the way refused", async () => {
    const dir = await fixture();
    const store = join(dir, "store");
    const args = ["bench", "tomi", "--data", join(dir, "g.txt"), "--store", store, "--quiet"];
    expect(await main([...args, "--json", join(dir, "new", "deeper", "r.json")])).toBe(0);
    expect(existsSync(join(dir, "new", "deeper", "r.json"))).toBe(true);

    io.err = "";
    expect(await main([...args, "--md", dir])).toBe(2);
    expect(io.err).toContain(`--md: ${dir} is a folder; give a file name`);
    expect(await main([...args, "--json", join(dir, "g.txt", "r.json")])).toBe(2);
    expect(io.err).toContain(`--json: cannot write ${join(dir, "g.txt", "r.json")} (ENOTDIR`);
    // Neither started a run.
    expect((await RunStore.open(store)).list()).toHaveLength(1);

    // A report over the benchmark file, or two reports over each other.
    io.err = "";
    expect(await main([...args, "--json", join(dir, "g.txt")])).toBe(2);
    expect(io.err).toContain(`--data and --json name the same file (${join(dir, "g.txt")}); give --json another file`);
    expect(await main([...args, "--json", join(dir, "same"), "--md", join(dir, ".", "same")])).toBe(2);
    expect(io.err).toContain("--json and --md name the same file");
    expect(readFileSync(join(dir, "g.txt"), "utf8")).toMatch(/^1 /);
    expect((await RunStore.open(store)).list()).toHaveLength(1);

    // --data that is a loop of links is bad input naming it, not a bare system error.
    symlinkSync(join(dir, "loop-b"), join(dir, "loop-a"));
    symlinkSync(join(dir, "loop-a"), join(dir, "loop-b"));
    io.err = "";
    expect(await main(["bench", "tomi", "--data", join(dir, "loop-a"), "--json", join(dir, "loop.json"), "--store", store, "--quiet"])).toBe(2);
    expect(io.err).toBe(`socialworld bench: bad input: ${join(dir, "loop-a")}: cannot read: ELOOP (a loop of symbolic links)\n`);

    io.err = "";
    expect(await main(["bench", "tomi", "--data", join(dir, "g.txt"), "--store", join(dir, "g.txt"), "--quiet"])).toBe(1);
    expect(io.err).toBe(`socialworld bench: ENOTDIR: not a directory, mkdir '${join(dir, "g.txt", "runs")}'\n`);
  });

  it("resumes an interrupted run without asking logged questions again", async () => {
    const dir = await fixture();
    const store = join(dir, "store");
    const args = ["bench", "tomi", "--data", join(dir, "g.txt"), "--store", store, "--quiet"];
    expect(await main([...args, "--json", join(dir, "a.json")])).toBe(0);
    const s = await RunStore.open(store);
    const run = s.list()[0]!;
    // Simulate a crash after 12 questions: keep 12 lines and a torn 13th.
    const path = s.episodesPath(run);
    const lines = readFileSync(path, "utf8").split("\n");
    writeFileSync(path, lines.slice(0, 12).join("\n") + "\n" + lines[12]!.slice(0, 40));
    const before = readEpisodeLog(path);
    expect(before).toMatchObject({ total: 12, torn: true });
    expect(await main([...args, "--resume", run.id, "--json", join(dir, "b.json")])).toBe(0);
    const a = JSON.parse(readFileSync(join(dir, "a.json"), "utf8"));
    const b = JSON.parse(readFileSync(join(dir, "b.json"), "utf8"));
    expect(b.byType).toEqual(a.byType);
    expect(b.total).toBe(30);
    // The torn line was set aside before appending: the log holds each question once, whole.
    const after = readEpisodeLog<{ result: { id: string } }>(path);
    expect(after).toMatchObject({ total: 30, torn: false });
    expect(new Set(after.records.map((r) => r.result.id)).size).toBe(30);
    expect(readFileSync(`${path}.torn`, "utf8")).toBe(lines[12]!.slice(0, 40) + "\n");
    expect(io.err).toContain(`its 40 bytes are kept in ${path}.torn`);
  });

  it("will not resume a run that a live process is still running", async () => {
    const dir = await fixture();
    const store = join(dir, "store");
    const args = ["bench", "tomi", "--data", join(dir, "g.txt"), "--store", store, "--quiet"];
    expect(await main(args)).toBe(0);
    const s = await RunStore.open(store);
    // Marked running by this very process, which is alive.
    const run = await s.update(s.list()[0]!.id, { status: "running" });
    const lines = readFileSync(s.episodesPath(run), "utf8");
    expect(await main([...args, "--resume", run.id])).toBe(2);
    expect(io.err).toContain(`--resume: run ${run.id} is still running (process ${process.pid}); wait for it to end or stop it first`);
    expect(readFileSync(s.episodesPath(run), "utf8")).toBe(lines);
  });
});
