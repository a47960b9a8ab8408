import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { replaceFile, writeFileAtomic } from "../../store/write-atomic.js";

describe("replacing a file whole", () => {
  it("replaces the file, and leaves nothing else beside it", () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-atomic-"));
    const path = join(dir, "report.json");
    writeFileSync(path, "old");
    writeFileAtomic(path, "new");
    expect(readFileSync(path, "utf8")).toBe("new");
    writeFileAtomic(path, new Uint8Array([104, 105]));
    expect(readFileSync(path, "utf8")).toBe("hi");
    expect(readdirSync(dir)).toEqual(["report.json"]);
  });

  it("keeps the old file, and no half-written one, when writing fails midway", () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-atomic-"));
    const path = join(dir, "model.safetensors");
    writeFileSync(path, "old");
    expect(() =>
      replaceFile(path, (tmp) => {
        writeFileSync(tmp, "half of the n");
        throw new Error("disk full");
      }),
    ).toThrow("disk full");
    expect(readFileSync(path, "utf8")).toBe("old");
    expect(readdirSync(dir)).toEqual(["model.safetensors"]);
  });
});
