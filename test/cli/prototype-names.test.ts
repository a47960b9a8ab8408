/**
 * Names from the data are names, whatever they spell: a Hi-ToM room or a FANToM speaker called
 * "constructor", "toString" or "__proto__" (keys every plain object inherits) reads and scores
 * exactly as the same file with an ordinary name, never a TypeError.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { generateHitom } from "../../worlds/hitom/generator.js";

const io = captureOutput();
const root = mkdtempSync(join(tmpdir(), "sw-proto-names-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `bench` on `text`; the report's scores, or the failure. */
async function bench(benchmark: string, name: string, text: string) {
  const data = join(root, `${name}.json`);
  const report = join(root, `${name}.report.json`);
  writeFileSync(data, text);
  const code = await main(["bench", benchmark, "--data", data, "--agent", "simulation", "--store", join(root, "store"), "--json", report, "--quiet"]);
  if (code !== 0) return { code, err: io.err };
  const r = JSON.parse(readFileSync(report, "utf8")) as { total: number; correct: number; worldModel: { agreeWithOfficial: number }; byType: unknown };
  return { code, total: r.total, correct: r.correct, agreeWithOfficial: r.worldModel.agreeWithOfficial, byType: r.byType };
}

const whole = (word: string) => new RegExp(`\\b${word}\\b`, "g");

describe("names that are Object.prototype keys", () => {
  it("Hi-ToM: a room called constructor, toString, valueOf or hasOwnProperty", async () => {
    const g = await generateHitom(10, 3);
    const room = /entered the ([a-z_]+)\./.exec(g.json)![1]!;
    expect(room).not.toBe("waiting_room");
    const plain = await bench("hitom", "hitom-plain", g.json.replace(whole(room), "zroom"));
    expect(plain.code).toBe(0);
    for (const name of ["constructor", "toString", "valueOf", "hasOwnProperty"]) {
      expect(await bench("hitom", `hitom-${name}`, g.json.replace(whole(room), name)), name).toEqual(plain);
    }
  });

  it("FANToM: a speaker called constructor, toString, valueOf or __proto__", async () => {
    const g = generateFantom(20, 4);
    const speaker = /"short_context": "([A-Z][a-z]+):/.exec(g.json)![1]!;
    const plain = await bench("fantom", "fantom-plain", g.json.replace(whole(speaker), "Zed"));
    expect(plain.code).toBe(0);
    for (const name of ["constructor", "toString", "valueOf", "__proto__"]) {
      const r = await bench("fantom", `fantom-${name}`, g.json.replace(whole(speaker), name));
      // The simulation agent reads capitalised names best; the world model's labels must not change.
      expect({ code: r.code, total: r.total, agreeWithOfficial: r.agreeWithOfficial }, name).toEqual({ code: 0, total: plain.total, agreeWithOfficial: plain.agreeWithOfficial });
    }
  });
});
