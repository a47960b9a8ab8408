/**
 * Bad input at random: seeded mutations of a generated file of each benchmark go through
 * `socialworld bench`. A mutation may delete or retype a field, cut, repeat or garble a line,
 * change a word, or cut the file short. Each run must end one of two ways:
 * - it scores the file (the format allows the change), and the report is written;
 * - it stops with exit status 2 and one "bad input" line naming the file and the line or field,
 *   and writes no report.
 * Anything else fails the test. A crash rejects main's promise; so does an error the command does
 * not turn into a "bad input" line.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { Rng } from "../../worlds/core/rng.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { generateTomi } from "../../worlds/tomi/generator.js";

const io = captureOutput();
const MUTATIONS = 40;
const root = mkdtempSync(join(tmpdir(), "sw-bad-input-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Files = Record<string, string>;
type Path = readonly (string | number)[];

interface Outcome {
  readonly scored: number;
  readonly rejected: number;
  /** One line per run that ended neither way. */
  readonly problems: string[];
}

/** Runs `bench` on every mutation of `files` and sorts the outcomes. `data` names the file bench reads. */
async function fuzz(benchmark: string, files: Files, data: string, mutate: (rng: Rng, files: Files) => { files: Files; what: string }): Promise<Outcome> {
  const rng = Rng.seeded(`bad-input:${benchmark}`);
  const problems: string[] = [];
  let scored = 0;
  let rejected = 0;
  for (let i = 0; i < MUTATIONS; i++) {
    const { files: mutated, what } = mutate(rng, files);
    const dir = join(root, `${benchmark}-${i}`);
    mkdirSync(dir);
    for (const [name, text] of Object.entries(mutated)) writeFileSync(join(dir, name), text);
    const report = join(dir, "report.json");
    const errBefore = io.err.length;
    const code = await main(["bench", benchmark, "--data", join(dir, data), "--agent", "simulation", "--store", join(dir, "store"), "--json", report, "--quiet"]);
    const err = io.err.slice(errBefore);
    const fail = (why: string) => problems.push(`${what}: ${why} (exit ${code}; stderr: ${err.trim().slice(0, 300)})`);
    if (code === 0) {
      scored++;
      if (!existsSync(report)) fail("exit 0 without a report");
    } else {
      rejected++;
      if (code !== 2) fail("exit status other than 2");
      // "bad input: FILE:LINE: ..." or "bad input: FILE (FIELD): ...", for the file bench read or one beside it.
      const prefix = `socialworld bench: bad input: ${dir}/`;
      if (!err.startsWith(prefix) || !/^[^ :]+(:\d+| \([^)]+\)): .+\n$/.test(err.slice(prefix.length))) {
        fail("the error does not name the file and the line or field, on one line");
      }
      if (existsSync(report)) fail("a report was written");
    }
  }
  return { scored, rejected, problems };
}

/** Both ends are reached: some mutations the format allows, most it does not; and none broke the rule. */
function expectSound(out: Outcome): void {
  expect(out.problems).toEqual([]);
  expect(out.scored).toBeGreaterThan(0);
  expect(out.rejected).toBeGreaterThan(MUTATIONS / 2);
}

/** Every path into `value`, following the first three items of each array (enough to reach every kind of field). */
function pathsOf(value: unknown, at: Path = []): Path[] {
  const out: Path[] = at.length ? [at] : [];
  if (Array.isArray(value)) value.slice(0, 3).forEach((v, i) => out.push(...pathsOf(v, [...at, i])));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...at, k]));
  return out;
}

/**
 * A JSON file mutated: a field deleted, retyped or emptied, the text cut or garbled, or two of its
 * items swapped (a change every reader must take: items stand alone).
 */
function mutateJson(name: string) {
  return (rng: Rng, files: Files): { files: Files; what: string } => {
    const text = files[name]!;
    const kind = rng.pick(["delete", "retype", "retype", "empty", "cut", "garble", "swap"] as const);
    if (kind === "cut") {
      const at = rng.int(text.length);
      return { files: { ...files, [name]: text.slice(0, at) }, what: `cut at ${at}` };
    }
    if (kind === "garble") {
      const at = rng.int(text.length);
      const junk = rng.pick(["}", "]", ",", '"', "x", "{{"]);
      return { files: { ...files, [name]: text.slice(0, at) + junk + text.slice(at) }, what: `${JSON.stringify(junk)} inserted at ${at}` };
    }
    const value: unknown = JSON.parse(text);
    if (kind === "swap") {
      // The list of items: FANToM's top-level array, Hi-ToM's `data`.
      const items = (Array.isArray(value) ? value : (value as { data: unknown[] }).data) as unknown[];
      const i = rng.int(items.length);
      const j = (i + 1 + rng.int(items.length - 1)) % items.length;
      [items[i], items[j]] = [items[j], items[i]];
      return { files: { ...files, [name]: JSON.stringify(value, null, 1) }, what: `items ${i} and ${j} swapped` };
    }
    const path = rng.pick(pathsOf(value));
    const parent = path.slice(0, -1).reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], value) as Record<string | number, unknown>;
    const key = path[path.length - 1]!;
    const where = path.join(".");
    if (kind === "delete") {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
    } else if (kind === "retype") {
      parent[key] = rng.pick<unknown>([null, 7, -1, 1.5, "x", "", [], {}, [1], { a: 1 }, true]);
    } else {
      const old = parent[key];
      parent[key] = typeof old === "string" ? "" : Array.isArray(old) ? [] : old && typeof old === "object" ? {} : null;
    }
    return { files: { ...files, [name]: JSON.stringify(value, null, 1) }, what: `${kind} ${where}` };
  };
}

/** A ToMi story file and its trace mutated a line at a time. */
function mutateTomi(rng: Rng, files: Files): { files: Files; what: string } {
  const lines = files["g.txt"]!.split("\n");
  const trace = files["g.trace"]!.split("\n");
  const i = rng.int(lines.length - 1);
  const j = rng.int(trace.length - 1);
  const kind = rng.pick(["delete", "repeat", "word", "word", "cut", "untab", "renumber", "trace-delete", "trace-repeat", "trace-field", "file-cut"] as const);
  const what = `${kind} at line ${(kind.startsWith("trace-") ? j : i) + 1}`;
  if (kind === "delete") lines.splice(i, 1);
  else if (kind === "repeat") lines.splice(i, 0, lines[i]!);
  else if (kind === "word") {
    const words = lines[i]!.split(" ");
    if (words.length > 1) words[1 + rng.int(words.length - 1)] = rng.pick(["the", "Oliver", "box", "zzz", "entered", "", "1", "moved", "is", "thinks", "Where", "?"]);
    lines[i] = words.join(" ");
  } else if (kind === "cut") lines[i] = lines[i]!.slice(0, rng.int(lines[i]!.length + 1));
  else if (kind === "untab") lines[i] = lines[i]!.replace("\t", " ");
  else if (kind === "renumber") lines[i] = `${rng.pick(["0", "99", "-1", "x"])}${lines[i]!.slice(lines[i]!.indexOf(" "))}`;
  else if (kind === "trace-delete") trace.splice(j, 1);
  else if (kind === "trace-repeat") trace.splice(j, 0, trace[j]!);
  else if (kind === "trace-field") {
    const fields = trace[j]!.split(",");
    fields[rng.int(fields.length)] = rng.pick(["", "x", "first_order_2_tom", "true_belief"]);
    trace[j] = fields.join(",");
  } else {
    const text = lines.join("\n");
    const at = rng.int(text.length);
    return { files: { ...files, "g.txt": text.slice(0, at) }, what: `file cut at ${at}` };
  }
  return { files: { "g.txt": lines.join("\n"), "g.trace": trace.join("\n") }, what };
}

describe("bench on randomly damaged files", () => {
  it("ToMi: scores the file or names the file and line, never crashes, never a partial report", async () => {
    const g = await generateTomi(18, 11);
    const out = await fuzz("tomi", { "g.txt": g.txt, "g.trace": g.trace }, "g.txt", mutateTomi);
    expectSound(out);
  });

  it("Hi-ToM: scores the file or names the file and field, never crashes, never a partial report", async () => {
    const g = await generateHitom(15, 12);
    const out = await fuzz("hitom", { "g.json": g.json }, "g.json", mutateJson("g.json"));
    expectSound(out);
  });

  it("FANToM: scores the file or names the file and field, never crashes, never a partial report", async () => {
    const g = generateFantom(20, 13);
    const out = await fuzz("fantom", { "g.json": g.json }, "g.json", mutateJson("g.json"));
    expectSound(out);
  });
});
