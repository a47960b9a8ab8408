import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { CLAIM_FILE, claimFolder, FolderInUse } from "../../store/folder-claim.js";

const io = captureOutput();
const folder = () => mkdtempSync(join(tmpdir(), "sw-claim-"));
const claimBy = (dir: string, pid: number, host = hostname()) => writeFileSync(join(dir, CLAIM_FILE), JSON.stringify({ pid, host, since: "2026-11-23T00:00:00.000Z" }));

describe("claimFolder", () => {
  it("gives a folder to one run at a time, and frees it on release", async () => {
    const dir = folder();
    const first = await claimFolder(dir);
    const err = await claimFolder(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FolderInUse);
    expect((err as Error).message).toMatch(new RegExp(`^${dir} is in use by process ${process.pid} on ${hostname()} \\(since .+\\); wait for that run to end or stop it$`));
    first.release();
    expect(existsSync(join(dir, CLAIM_FILE))).toBe(false);
    (await claimFolder(dir)).release();
  });

  it("takes over the claim of a process that has died on this host, at once", async () => {
    const dir = folder();
    claimBy(dir, spawnSync(process.execPath, ["-e", "0"]).pid!);
    (await claimFolder(dir)).release();
  });

  it("takes over another host's claim only when it has not been touched for ten minutes", async () => {
    const dir = folder();
    claimBy(dir, 1, "another-host");
    await expect(claimFolder(dir)).rejects.toThrow(`${dir} is in use by process 1 on another-host (since 2026-11-23T00:00:00.000Z)`);
    const old = (Date.now() - 11 * 60_000) / 1000;
    utimesSync(join(dir, CLAIM_FILE), old, old);
    (await claimFolder(dir)).release();
  });

  it("stops a second training run started on the same --out before it writes anything", async () => {
    const dir = folder();
    const data = join(dir, "data.jsonl");
    writeFileSync(data, Array.from({ length: 16 }, (_, i) => JSON.stringify({ prompt: `Where is the apple ${i}?`, response: "box" })).join("\n") + "\n");
    const out = join(dir, "out");
    const args = ["train", "sft", "--init", "tiny", "--data", data, "--out", out, "--steps", "40", "--quiet"];
    const first = main(args);
    while (!existsSync(join(out, CLAIM_FILE))) await new Promise((r) => setTimeout(r, 5));
    expect(await main(args)).toBe(2);
    expect(io.err).toContain(`socialworld train sft: --out: ${out} is in use by process ${process.pid}`);
    expect(await first).toBe(0);
    expect(existsSync(join(out, CLAIM_FILE))).toBe(false);
    // The step log holds each step once.
    const steps = readFileSync(join(out, "train_log.jsonl"), "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { step: number }).step);
    expect(steps).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });
});
