import { execFileSync, spawn } from "node:child_process";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { once } from "node:events";
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

  it("follows a symbolic link: the file it names is replaced, the link stays", () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-atomic-"));
    writeFileSync(join(dir, "target.json"), "old");
    symlinkSync("target.json", join(dir, "link.json"));
    symlinkSync("link.json", join(dir, "link2.json"));
    writeFileAtomic(join(dir, "link2.json"), "new");
    expect(readFileSync(join(dir, "target.json"), "utf8")).toBe("new");
    expect(readlinkSync(join(dir, "link2.json"))).toBe("link.json");
    expect(lstatSync(join(dir, "link.json")).isSymbolicLink()).toBe(true);
    // A link to a file not made yet makes it.
    symlinkSync("later.json", join(dir, "dangling.json"));
    writeFileAtomic(join(dir, "dangling.json"), "made");
    expect(readFileSync(join(dir, "later.json"), "utf8")).toBe("made");
    expect(readdirSync(dir).sort()).toEqual(["dangling.json", "later.json", "link.json", "link2.json", "target.json"]);
    symlinkSync("loop-b", join(dir, "loop-a"));
    symlinkSync("loop-a", join(dir, "loop-b"));
    expect(() => writeFileAtomic(join(dir, "loop-a"), "x")).toThrow(/^ELOOP: too many symbolic links/);
  });

  it("writes a pipe in place, and keeps it a pipe", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-atomic-"));
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const reader = spawn("sh", ["-c", `cat "${fifo}" > "${join(dir, "got")}"`]);
    writeFileAtomic(fifo, "through the pipe");
    await once(reader, "exit");
    expect(readFileSync(join(dir, "got"), "utf8")).toBe("through the pipe");
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  it("names the file in an error that names none (a full disk), and leaves a device a device", () => {
    // Through a link: were the device replaced by a plain file (the bug), the link would be, not it.
    const dir = mkdtempSync(join(tmpdir(), "sw-atomic-"));
    const full = join(dir, "full");
    symlinkSync("/dev/full", full);
    expect(() => writeFileAtomic(full, "report")).toThrow(`ENOSPC: no space left on device, write (${full})`);
    expect(lstatSync(full).isSymbolicLink()).toBe(true);
    expect(statSync("/dev/full").isCharacterDevice()).toBe(true);
  });

  it("names the file, not its temporary stand-in, when the write fails", () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-atomic-"));
    const path = join(dir, "r.json");
    let err: NodeJS.ErrnoException | undefined;
    try {
      replaceFile(path, (tmp) => {
        throw Object.assign(new Error(`EACCES: permission denied, open '${tmp}'`), { code: "EACCES", syscall: "open" });
      });
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    }
    expect(err?.message).toBe(`EACCES: permission denied, open '${path}'`);
    expect(err?.code).toBe("EACCES");
    expect(err?.path).toBe(path);
  });
});
