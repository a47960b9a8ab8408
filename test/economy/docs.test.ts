import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ECONOMY_DEFAULTS } from "../../worlds/economy/index.js";
import { EconomyParamsFields } from "../../worlds/economy/params.js";

const page = readFileSync(new URL("../../docs/worlds/economy.md", import.meta.url), "utf8");

describe("the economy's docs page", () => {
  it("lists every parameter with its default", () => {
    const rows = new Map<string, string>();
    for (const m of page.matchAll(/^\| `(\w+)` \| ([^|]+) \|/gm)) rows.set(m[1]!, m[2]!.trim());
    for (const key of Object.keys(EconomyParamsFields.shape)) {
      const d = ECONOMY_DEFAULTS[key as keyof typeof ECONOMY_DEFAULTS];
      const shown = Array.isArray(d) ? d.map((x) => +x.toFixed(4)).join(", ") : String(d);
      expect(rows.get(key), key).toBe(shown);
    }
    expect([...rows.keys()].sort()).toEqual(Object.keys(EconomyParamsFields.shape).sort());
  });
});
