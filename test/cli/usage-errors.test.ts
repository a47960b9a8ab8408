/**
 * Command-line errors a person can act on: one line and where to read more (not the whole help),
 * the nearest option or command to a mistyped one, a subcommand's own help, the optional --agent
 * shown with its default, a file of another benchmark named as such, and `runs list` as a table.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { generateHitom } from "../../worlds/hitom/generator.js";

const io = captureOutput();

async function tomiFile() {
  const dir = mkdtempSync(join(tmpdir(), "sw-usage-"));
  const files = await generateTomi(12, 4);
  writeFileSync(join(dir, "g.txt"), files.txt);
  writeFileSync(join(dir, "g.trace"), files.trace);
  return { dir, file: join(dir, "g.txt") };
}

describe("usage errors", () => {
  it("are one line and a hint, with the option meant", async () => {
    expect(await main(["bench", "tomi", "--dta", "x.txt"])).toBe(2);
    expect(io.err).toBe("socialworld bench: unknown option --dta (did you mean --data?)\nrun 'socialworld bench --help' for its options\n");
    io.err = "";
    expect(await main(["train", "grpo", "--modle", "m", "--world", "tomi", "--out", "o"])).toBe(2);
    expect(io.err).toBe("socialworld train grpo: unknown option --modle (did you mean --model?)\nrun 'socialworld train grpo --help' for its options\n");
    io.err = "";
    expect(await main(["bench", "tomi", "--data"])).toBe(2);
    expect(io.err).toBe("socialworld bench: --data needs a value\nrun 'socialworld bench --help' for its options\n");
    io.err = "";
    expect(await main(["bnech", "tomi"])).toBe(2);
    expect(io.err).toBe(`socialworld: unknown command "bnech" (did you mean bench?)\nrun 'socialworld --help' for the list of commands\n`);
    io.err = "";
    expect(await main(["bench", "tomi", "--frobnicate"])).toBe(2);
    expect(io.err.split("\n")[0]).toBe("socialworld bench: unknown option --frobnicate");
  });

  it("a subcommand's help is its own", async () => {
    expect(await main(["train", "sft", "--help"])).toBe(0);
    expect(io.out).toContain("socialworld train sft (--model DIR | --init PRESET)");
    expect(io.out).not.toContain("train grpo --model");
    expect(io.out).not.toContain("--kl-estimator");
    io.out = "";
    expect(await main(["help", "train", "grpo"])).toBe(0);
    expect(io.out).toContain("--kl-estimator");
    expect(io.out).not.toContain("--grad-accum");
    io.out = "";
    expect(await main(["train", "--help"])).toBe(0);
    expect(io.out.split("\n").length).toBeLessThan(12);
    expect(io.out).toContain("socialworld train sft --help");
  });

  it("shows --agent as optional, with its default", async () => {
    expect(await main(["bench", "--help"])).toBe(0);
    expect(io.out.split("\n")[0]).toMatch(/^socialworld bench <tomi\|hitom\|fantom(\|[a-z]+)*> \[--data FILE\] \[--agent NAME\] \[options\]$/);
    expect(io.out).toMatch(/--agent NAME +who answers \(default: simulation\)/);
  });

  it("names the benchmark a file belongs to when it is given to another", async () => {
    const { dir, file } = await tomiFile();
    expect(await main(["bench", "hitom", "--data", file, "--store", join(dir, "store"), "--quiet"])).toBe(2);
    expect(io.err).toContain(`it looks like a ToMi file: run 'socialworld bench tomi --data ${file}'`);
    expect(io.err.trim().split("\n")).toHaveLength(1);
    const hitom = join(dir, "h.json");
    writeFileSync(hitom, (await generateHitom(5, 1)).json);
    io.err = "";
    expect(await main(["bench", "fantom", "--data", hitom, "--store", join(dir, "store"), "--quiet"])).toBe(2);
    expect(io.err).toContain(`it looks like a Hi-ToM file: run 'socialworld bench hitom --data ${hitom}'`);
  });

  it("runs list: the store, a header and aligned columns", async () => {
    const { dir, file } = await tomiFile();
    const store = join(dir, "store");
    expect(await main(["bench", "tomi", "--data", file, "--store", store, "--quiet"])).toBe(0);
    expect(await main(["bench", "tomi", "--data", file, "--store", store, "--quiet", "--agent", "random:1"])).toBe(0);
    io.out = "";
    expect(await main(["runs", "list", "--store", store])).toBe(0);
    const [title, blank, header, ...rows] = io.out.trimEnd().split("\n");
    expect(title).toBe(`runs in ${store}, newest first`);
    expect(blank).toBe("");
    expect(header).toMatch(/^RUN ID +KIND +STATUS +ACCURACY +STARTED \(UTC\) +TITLE$/);
    expect(rows).toHaveLength(2);
    for (const column of ["KIND", "STATUS", "STARTED (UTC)", "TITLE"]) {
      const at = header!.indexOf(column);
      for (const row of rows) expect(row[at - 1], `${column} in ${row}`).toBe(" ");
      for (const row of rows) expect(row[at], `${column} in ${row}`).not.toBe(" ");
    }
    // Accuracy right-aligned under its header.
    const end = header!.indexOf("ACCURACY") + "ACCURACY".length;
    expect(rows.map((r) => r.slice(0, end))).toEqual(rows.map((r) => r.slice(0, end)).map((s) => s.replace(/ +$/, "").padEnd(end)));
    expect(rows.every((r) => /%$/.test(r.slice(0, end)))).toBe(true);
    expect(rows[1]).toMatch(/ 100\.0% /);
  });
});
