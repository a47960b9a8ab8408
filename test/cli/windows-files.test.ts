/**
 * Benchmark files as a Windows editor saves them (a UTF-8 byte-order mark, \r\n line ends) score
 * exactly as the originals, whichever benchmark.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { generateTomi } from "../../worlds/tomi/generator.js";

captureOutput();

const asWindowsSaves = (text: string) => "\ufeff" + text.replace(/\n/g, "\r\n");

/** The report of `bench` on `files` (name to text), without what differs between any two runs. */
async function score(benchmark: string, files: Record<string, string>, data: string) {
  const dir = mkdtempSync(join(tmpdir(), "sw-windows-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const json = join(dir, "report.json");
  expect(await main(["bench", benchmark, "--data", join(dir, data), "--store", join(dir, "store"), "--json", json, "--quiet"])).toBe(0);
  const { total, correct, byType, disagreements } = JSON.parse(readFileSync(json, "utf8"));
  return { total, correct, byType, disagreements: disagreements.total };
}

describe("files saved on Windows", () => {
  it("ToMi: .txt and .trace with a byte-order mark and \\r\\n", async () => {
    const g = await generateTomi(24, 3);
    const original = await score("tomi", { "g.txt": g.txt, "g.trace": g.trace }, "g.txt");
    expect(original.total).toBe(24);
    expect(await score("tomi", { "g.txt": asWindowsSaves(g.txt), "g.trace": asWindowsSaves(g.trace) }, "g.txt")).toEqual(original);
  });

  it("Hi-ToM and FANToM: JSON with a byte-order mark and \\r\\n", async () => {
    const h = await generateHitom(10, 4);
    const hitom = await score("hitom", { "h.json": h.json }, "h.json");
    expect(hitom.total).toBe(10);
    expect(await score("hitom", { "h.json": asWindowsSaves(h.json) }, "h.json")).toEqual(hitom);
    const f = generateFantom(12, 5);
    const fantom = await score("fantom", { "f.json": f.json }, "f.json");
    expect(await score("fantom", { "f.json": asWindowsSaves(f.json) }, "f.json")).toEqual(fantom);
  });
});
