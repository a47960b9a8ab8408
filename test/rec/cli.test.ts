import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";

const io = captureOutput();
const tmp = () => mkdtempSync(join(tmpdir(), "sw-rec-"));

describe("socialworld generate rec", () => {
  it("writes MovieLens-1M's files and the latent truth into a folder, the same for the same seed", async () => {
    const dir = tmp();
    expect(await main(["generate", "rec", "--n", "40", "--seed", "3", "--out", join(dir, "a"), "--quiet"])).toBe(0);
    expect(await main(["generate", "rec", "--n", "40", "--seed", "3", "--out", join(dir, "b"), "--quiet"])).toBe(0);
    for (const f of ["ratings.dat", "movies.dat", "preferences.json"]) {
      expect(existsSync(join(dir, "a", f)), f).toBe(true);
      expect(readFileSync(join(dir, "a", f), "utf8")).toBe(readFileSync(join(dir, "b", f), "utf8"));
    }
    expect(readFileSync(join(dir, "a", "ratings.dat"), "utf8").split("\n")[0]).toMatch(/^1::\d+::[1-5]::\d+$/);
    expect(io.out).toContain("wrote 40 rec users (seed 3)");
    // Seconds alone; the first command loads the CLI's modules, minutes on a machine shared with training runs.
  }, 180_000);

  it("refuses an --out that is a file", async () => {
    const file = join(tmp(), "f");
    writeFileSync(file, "x");
    expect(await main(["generate", "rec", "--n", "5", "--out", file, "--quiet"])).toBe(2);
    expect(io.err).toContain("is a file; give a folder");
  });
});

describe("socialworld bench rec", () => {
  it("prints NDCG@10 and HR@10 of every recaller (SASRec among them), the best mixture and the oracle, and writes them as JSON", async () => {
    const dir = tmp();
    await main(["generate", "rec", "--n", "120", "--seed", "1", "--out", join(dir, "d"), "--quiet"]);
    io.out = "";
    const code = await main(["bench", "rec", "--data", join(dir, "d"), "--epochs", "5", "--sasrec-epochs", "2", "--sasrec-dim", "16", "--json", join(dir, "r.json"), "--md", join(dir, "r.md"), "--quiet"]);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(report).toMatchObject({ users: 120, test: 120, k: 10 });
    expect(report.rows.map((r: { agent: string }) => r.agent)).toEqual(["pop", "itemknn", "bpr", "sasrec", "best mixture", "oracle"]);
    expect(Object.keys(report.rows[4].weights)).toEqual(["pop", "itemknn", "bpr", "sasrec"]);
    for (const r of report.rows) {
      expect(r.ndcg).toBeGreaterThan(0);
      expect(r.hr).toBeGreaterThanOrEqual(r.ndcg);
      expect(r.users).toBe(120);
    }
    expect(io.out).toContain("| agent | NDCG@10 | s.e. | HR@10 | fit s | eval s | weights |");
    expect(readFileSync(join(dir, "r.md"), "utf8")).toBe(io.out);
  }, 180_000);

  it("generates in memory with --generate, and runs one agent or a fixed mixture", async () => {
    expect(await main(["bench", "rec", "--generate", "60", "--items", "60", "--agent", "oracle", "--quiet"])).toBe(0);
    expect(io.out).toMatch(/\| oracle \| 0\.\d{4} \|/);
    io.out = "";
    expect(await main(["bench", "rec", "--generate", "60", "--items", "60", "--agent", "mix:pop=1,itemknn=3", "--epochs", "1", "--quiet"])).toBe(0);
    expect(io.out).toContain("| mix:pop=1,itemknn=3 |");
    expect(io.out).toContain("pop 0.25, itemknn 0.75");
  });

  it("says what is wrong with its options and data", async () => {
    const cases: [string[], RegExp][] = [
      [["--generate", "5", "--data", "x"], /give either --data DIR or --generate N/],
      [[], /give either --data DIR or --generate N/],
      [["--generate", "20", "--agent", "bogus"], /--agent: unknown agent "bogus"/],
      [["--generate", "20", "--agent", "mix:pop=1,svd=2"], /--agent: mix: no recaller "svd"/],
      [["--data", "x", "--items", "5"], /--items/],
      [["--generate", "20", "--agent", "sasrec", "--sasrec-dim", "15"], /sasrec: dim 15 is not a multiple of heads 2/],
    ];
    for (const [argv, re] of cases) {
      io.err = "";
      expect(await main(["bench", "rec", ...argv]), argv.join(" ")).toBe(2);
      expect(io.err).toMatch(re);
    }
    const dir = tmp();
    writeFileSync(join(dir, "movies.dat"), "1::A (1990)::Drama\n");
    writeFileSync(join(dir, "ratings.dat"), "1::1::5::10\n1::1::4\n");
    io.err = "";
    expect(await main(["bench", "rec", "--data", dir, "--quiet"])).toBe(2);
    expect(io.err).toContain(`${join(dir, "ratings.dat")}:2: expected UserID::MovieID::Rating::Timestamp`);
    writeFileSync(join(dir, "ratings.dat"), "1::1::5::10\n1::1::4::11\n");
    io.err = "";
    expect(await main(["bench", "rec", "--data", dir, "--agent", "oracle", "--quiet"])).toBe(2);
    expect(io.err).toContain("the oracle needs the generator's latent truth");
  });

  it("has its own help", async () => {
    expect(await main(["bench", "rec", "--help"])).toBe(0);
    expect(io.out).toContain("socialworld bench rec (--data DIR | --generate N)");
  });
});
