/**
 * Paths do not depend on the folder a command runs from: the default store is the checkout's
 * data/, a run records its data file and output folder as absolute paths (an export from another
 * folder finds the file), and a command that writes a run says which store holds it.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { defaultStoreRoot, RunStore } from "../../store/run-store.js";
import { generateTomi } from "../../worlds/tomi/generator.js";

const io = captureOutput();
const root = resolve(import.meta.dirname, "../..");
const startedIn = process.cwd();
afterEach(() => process.chdir(startedIn));

describe("paths", () => {
  it("the default store is the checkout's data/, whichever folder the command runs from", () => {
    process.chdir(mkdtempSync(join(tmpdir(), "sw-elsewhere-")));
    expect(defaultStoreRoot({})).toBe(join(root, "data"));
    expect(defaultStoreRoot({ SOCIALWORLD_DATA: "/srv/sw" })).toBe("/srv/sw");
  });

  it("a run started with a relative --data is exported from another folder, and says its store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-paths-"));
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    const files = await generateTomi(12, 3);
    writeFileSync(join(dir, "a", "g.txt"), files.txt);
    writeFileSync(join(dir, "a", "g.trace"), files.trace);
    const store = join(dir, "store");
    process.chdir(join(dir, "a"));
    expect(await main(["bench", "tomi", "--data", "g.txt", "--store", store, "--quiet"])).toBe(0);
    const [run] = (await RunStore.open(store)).list();
    expect(run!.params.data).toBe(join(dir, "a", "g.txt"));
    expect(io.err).toContain(`run ${run!.id} in the store ${store}`);

    process.chdir(join(dir, "b"));
    expect(await main(["export", "--run", run!.id, "--format", "chat", "--out", "chat.jsonl", "--store", store])).toBe(0);
    expect(existsSync(join(dir, "b", "chat.jsonl"))).toBe(true);
    // Resuming from the first folder with the same relative path is the same data file.
    process.chdir(join(dir, "a"));
    const resumed = await main(["bench", "tomi", "--data", "g.txt", "--store", store, "--resume", run!.id, "--quiet"]);
    expect(io.err).not.toContain("has data=");
    expect(resumed).toBe(0);
  });
});
