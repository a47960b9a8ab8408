import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";

const io = captureOutput();

describe("socialworld generate hitom / bench hitom", () => {
  it("generates a file and benches it: 100% for the simulation agent, reported by order, deception, prompting and length", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-cli-"));
    const file = join(dir, "g.json");
    expect(await main(["generate", "hitom", "--n", "30", "--seed", "2", "--out", file, "--quiet"])).toBe(0);
    expect(io.out).toContain(`wrote 30 hitom questions (seed 2): ${file}`);
    const code = await main(["bench", "hitom", "--data", file, "--json", join(dir, "r.json"), "--store", join(dir, "store"), "--quiet"]);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(report).toMatchObject({ benchmark: "hitom", agent: "simulation", total: 30, correct: 30, accuracy: 1 });
    expect(Object.keys(report.byType)).toEqual(["order_0", "order_1", "order_2", "order_3", "order_4"]);
    expect(Object.keys(report.splits).sort()).toEqual(["deception", "length", "prompting"]);
    expect(io.out).toContain("By deception:");
  });

  it("benches a policy told to write its own context in simulation mode, and scores its traces against the world model's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-cli-"));
    const file = join(dir, "g.json");
    const policy = join(dir, "policy");
    expect(await main(["generate", "hitom", "--n", "4", "--seed", "2", "--out", file, "--quiet"])).toBe(0);
    // A window that holds a story, its trace and the byte pieces of words the tiny vocabulary lacks.
    expect(await main(["model", "init", "--preset", "tiny", "--out", policy, "--seed", "1", "--corpus", file, "--tokenizer", "word", "--context", "4096"])).toBe(0);
    const bench = (context: string, mode: string) =>
      main(["bench", "hitom", "--data", file, "--agent", `policy:${policy}?context=${context}`, "--mode", mode, "--json", join(dir, `${context}-${mode}.json`), "--store", join(dir, "store"), "--quiet"]);
    for (const context of ["self", "self-latest"]) {
      expect(await bench(context, "simulation")).toBe(0);
      const report = JSON.parse(readFileSync(join(dir, `${context}-simulation.json`), "utf8"));
      expect(report).toMatchObject({ total: 4, errors: { count: 0 }, writtenContext: { questions: 4 } });
    }
    // In vanilla mode the option asks nothing of the world, and no trace is scored.
    expect(await bench("self", "vanilla")).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "self-vanilla.json"), "utf8")).writtenContext).toBeUndefined();
  });

  it("stops on bad input with the file and line or field, and writes no report", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-cli-"));
    const file = join(dir, "g.json");
    expect(await main(["generate", "hitom", "--n", "10", "--seed", "2", "--out", file, "--quiet"])).toBe(0);
    const good = readFileSync(file, "utf8");
    const bench = (text: string) => {
      writeFileSync(file, text);
      return main(["bench", "hitom", "--data", file, "--json", join(dir, "r.json"), "--store", join(dir, "store"), "--quiet"]);
    };
    expect(await bench(good.slice(0, Math.floor(good.length / 2)))).toBe(2);
    expect(io.err).toMatch(/bad input: .*g\.json:\d+: invalid JSON: /);
    const data = JSON.parse(good) as { data: Record<string, unknown>[] };
    delete data.data[3]!.answer;
    expect(await bench(JSON.stringify(data))).toBe(2);
    expect(io.err).toContain(`bad input: ${file} (data[3].answer): Invalid input: expected string, received undefined`);
    const odd = JSON.parse(good) as { data: { story: string }[] };
    odd.data[0]!.story = odd.data[0]!.story.replace(/^2 .*$/m, "2 Ella teleported to the attic.");
    expect(await bench(JSON.stringify(odd))).toBe(2);
    expect(io.err).toContain(`bad input: ${file} (data[0].story line 2): unknown sentence: "Ella teleported to the attic."`);
    expect(existsSync(join(dir, "r.json"))).toBe(false);
  });
});
