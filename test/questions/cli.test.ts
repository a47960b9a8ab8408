import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { TOM_DATA, tomData } from "../data-paths.js";
import { main } from "../../cli/main.js";
import { RunStore } from "../../store/run-store.js";
import { logRoomRun } from "./room-log.js";

const io = captureOutput();

interface Report {
  total: number;
  correct: number;
  byType: Record<string, { total: number }>;
  items?: unknown;
}

async function bench(args: string[]): Promise<Report> {
  const dir = mkdtempSync(join(tmpdir(), "sw-q-bench-"));
  const code = await main(["bench", ...args, "--json", join(dir, "r.json"), "--quiet"]);
  expect(code, io.err).toBe(0);
  return JSON.parse(readFileSync(join(dir, "r.json"), "utf8")) as Report;
}

/** The questions (text and label) of a ToMi .txt file, with the story they follow. */
function tomiQuestions(file: string): Map<string, string> {
  const out = new Map<string, string>();
  let story: string[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    const m = /^(\d+) (.*)$/.exec(line)!;
    if (m[1] === "1") story = [];
    const [text, answer] = m[2]!.split("\t");
    if (answer === undefined) story.push(text!);
    else out.set(`${story.join(" ")}|${text}`, answer);
  }
  return out;
}

/** The questions (story body and question text) of a Hi-ToM file, with their labels; VP stories without their instruction line. */
function hitomQuestions(file: string): [string, string][] {
  const data = (JSON.parse(readFileSync(file, "utf8")) as { data: { story: string; question: string; answer: string }[] }).data;
  return data.map((e) => [`${e.story.split("\n").filter((l) => /^\d+ /.test(l)).join("\n")}|${e.question}`, e.answer]);
}

describe("socialworld questions", () => {
  it("asks a room's episodes every ToMi question, in ToMi's format, and bench runs the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-q-"));
    const store = await RunStore.open(join(dir, "store"));
    // The second seat at random: the stories told are not the script's.
    const run = await logRoomRun(store, "tomi", [11, 12, 13], (agents) => agents.slice(1, 2));
    expect(await main(["questions", "--run", run.id, "--out", join(dir, "q.txt"), "--store", join(dir, "store"), "--quiet"]), io.err).toBe(0);
    expect(io.out).toMatch(/wrote \d+ tomi questions about 3 episodes/);
    expect(existsSync(join(dir, "q.trace"))).toBe(true);
    const asked = tomiQuestions(join(dir, "q.txt"));
    // Every type, and a second-order question for each ordered pair of a story's agents.
    for (const t of ["reality", "memory", "first_order", "second_order"]) expect(io.out).toContain(t);
    const report = await bench(["tomi", "--data", join(dir, "q.txt"), "--agent", "simulation", "--store", join(dir, "store")]);
    expect(report.total).toBe(asked.size);
    // The symbolic agent reads the story as the world model does: the labels are its answers.
    expect(report.correct).toBe(report.total);
  });

  it.skipIf(!TOM_DATA)("from a ToMi benchmark run, reproduces the file's questions and labels", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-q-"));
    const data = tomData("tomi", "original", "fb_all_val.txt");
    await bench(["tomi", "--data", data, "--limit", "300", "--agent", "simulation", "--store", join(dir, "store")]);
    const store = await RunStore.open(join(dir, "store"));
    const [run] = store.list();
    expect(await main(["questions", "--run", run!.id, "--out", join(dir, "q.txt"), "--store", join(dir, "store"), "--quiet"]), io.err).toBe(0);
    const ours = tomiQuestions(join(dir, "q.txt"));
    const official = [...tomiQuestions(data)].slice(0, 300);
    let same = 0;
    const differ: string[] = [];
    for (const [key, answer] of official) {
      expect(ours.has(key), key).toBe(true);
      if (ours.get(key) === answer) same++;
      else differ.push(key);
    }
    // Where the world model and ToMi's label disagree, the bench report names it a disagreement.
    const report = JSON.parse(readFileSync(join(store.dirOf(run!), "report.json"), "utf8")) as { disagreements: { total: number } };
    expect(differ.length).toBe(report.disagreements.total);
    expect(same).toBeGreaterThan(280);
  });

  it.skipIf(!TOM_DATA)("from a Hi-ToM benchmark run, reproduces the file's questions and labels, at every order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-q-"));
    const data = tomData("hitom", "Hi-ToM_dev.json");
    await bench(["hitom", "--data", data, "--limit", "60", "--agent", "simulation", "--store", join(dir, "store")]);
    const store = await RunStore.open(join(dir, "store"));
    const [run] = store.list();
    expect(await main(["questions", "--run", run!.id, "--out", join(dir, "q.json"), "--store", join(dir, "store"), "--quiet"]), io.err).toBe(0);
    const ours = new Map(hitomQuestions(join(dir, "q.json")));
    const official = hitomQuestions(data).slice(0, 60);
    const differ: string[] = [];
    for (const [key, answer] of official) {
      expect(ours.has(key), key).toBe(true);
      if (ours.get(key) !== answer) differ.push(key);
    }
    const report = JSON.parse(readFileSync(join(store.dirOf(run!), "report.json"), "utf8")) as { disagreements: { total: number } };
    expect(differ.length).toBe(report.disagreements.total);
  });

  it("asks a Hi-ToM room's episodes up to order 4; --types and --max choose, seeded", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-q-"));
    const store = await RunStore.open(join(dir, "store"));
    const run = await logRoomRun(store, "hitom", [3, 4, 5, 6], (agents) => agents.slice(0, 1));
    const args = ["questions", "--run", run.id, "--store", join(dir, "store"), "--quiet", "--types", "order_0,order_2,order_4", "--max", "40"];
    expect(await main([...args, "--out", join(dir, "a.json")]), io.err).toBe(0);
    expect(await main([...args, "--out", join(dir, "b.json")]), io.err).toBe(0);
    const a = readFileSync(join(dir, "a.json"), "utf8");
    expect(readFileSync(join(dir, "b.json"), "utf8")).toBe(a);
    const entries = (JSON.parse(a) as { data: { question_order: number }[] }).data;
    expect(entries).toHaveLength(40);
    expect(entries.every((e) => [0, 2, 4].includes(e.question_order))).toBe(true);
    expect(entries.some((e) => e.question_order === 4)).toBe(true);
    const report = await bench(["hitom", "--data", join(dir, "a.json"), "--agent", "simulation", "--store", join(dir, "store")]);
    expect(report).toMatchObject({ total: 40, correct: 40 });
  });

  it("refuses what it cannot do, naming why", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-q-"));
    const store = await RunStore.open(join(dir, "store"));
    const tomi = await logRoomRun(store, "tomi", [1]);
    const run = (id: string, ...more: string[]) => main(["questions", "--run", id, "--out", join(dir, "q.txt"), "--store", join(dir, "store"), "--quiet", ...more]);
    expect(await run("nope")).toBe(2);
    expect(io.err).toContain('no run "nope"');
    expect(await run(tomi.id, "--types", "order_3")).toBe(2);
    expect(io.err).toContain("order_3 is not a type this world asks");
    const fantom = await logRoomRun(store, "fantom", [1]);
    expect(await run(fantom.id)).toBe(2);
    expect(io.err).toMatch(/the fantom world asks no questions about its episodes \(worlds that do: tomi, hitom\)/);
    const empty = await store.create("room", "empty", {});
    expect(await run(empty.id)).toBe(2);
    expect(io.err).toContain("has no episodes to ask about");
    expect(existsSync(join(dir, "q.txt"))).toBe(false);
  });

  it("leaves out an episode its log does not replay, and says which and why", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-q-"));
    const store = await RunStore.open(join(dir, "store"));
    const run = await logRoomRun(store, "tomi", [21, 22]);
    const path = store.episodesPath(run);
    const [first, second] = readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { socialized_context: { socialized_context: { state: string }[] } });
    first!.socialized_context.socialized_context[2]!.state = "Somebody entered the attic.";
    writeFileSync(path, `${JSON.stringify(first)}\n${JSON.stringify(second)}\n`);
    expect(await main(["questions", "--run", run.id, "--out", join(dir, "q.txt"), "--store", join(dir, "store"), "--quiet"]), io.err).toBe(0);
    expect(io.err).toMatch(/left out 1 episode .*\n.*record 0 \(episode 1\): timestep 3: the logged state is "Somebody entered the attic\."/);
    expect(io.out).toContain("about 1 episode of run");
  });
});
