import { appendFileSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EpisodeLog, readEpisodeLog } from "../../store/episode-log.js";
import { DataError } from "../../worlds/core/errors.js";

const logIn = () => join(mkdtempSync(join(tmpdir(), "sw-log-")), "episodes.jsonl");

function writeRecords(path: string, ids: number[]): void {
  const log = new EpisodeLog(path);
  for (const id of ids) log.append({ id, text: "x".repeat(id) });
  log.close();
}

describe("EpisodeLog", () => {
  it("names its file when a write fails without naming one (a full disk)", () => {
    const path = logIn();
    symlinkSync("/dev/full", path);
    const log = new EpisodeLog(path);
    expect(() => log.append({ id: 1 })).toThrow(`ENOSPC: no space left on device, write (${path})`);
    expect(log.written).toBe(0);
    // A device cannot be flushed: closing says so, naming the file too.
    expect(() => log.close()).toThrow(`EINVAL: invalid argument, fsync (${path})`);
  });

  it("opened again after a crash mid-write, sets the torn line aside before appending", () => {
    const path = logIn();
    writeRecords(path, [1, 2, 3]);
    appendFileSync(path, '{"id": 4, "te');
    expect(readEpisodeLog(path)).toMatchObject({ total: 3, torn: true });
    const log = new EpisodeLog(path);
    expect(log.tornBytes).toBe('{"id": 4, "te'.length);
    log.append({ id: 4 });
    log.close();
    expect(readEpisodeLog<{ id: number }>(path)).toMatchObject({ total: 4, torn: false, records: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }] });
    expect(readFileSync(`${path}.torn`, "utf8")).toBe('{"id": 4, "te\n');
  });

  it("finds the last whole line behind a torn line longer than its read block, or no whole line at all", () => {
    const path = logIn();
    writeRecords(path, [1, 2]);
    const torn = `{"id": 3, "text": "${"y".repeat(200_000)}`;
    appendFileSync(path, torn);
    const log = new EpisodeLog(path);
    expect(log.tornBytes).toBe(torn.length);
    log.close();
    expect(readEpisodeLog(path)).toMatchObject({ total: 2, torn: false });

    const only = logIn();
    writeFileSync(only, '{"id": 1');
    expect(new EpisodeLog(only).tornBytes).toBe(8);
    expect(readFileSync(only, "utf8")).toBe("");
  });

  it("leaves a whole log, and a new one, as it is", () => {
    const path = logIn();
    expect(new EpisodeLog(path).tornBytes).toBe(0);
    writeRecords(path, [1, 2]);
    const before = readFileSync(path, "utf8");
    expect(new EpisodeLog(path).tornBytes).toBe(0);
    expect(readFileSync(path, "utf8")).toBe(before);
    expect(existsSync(`${path}.torn`)).toBe(false);
  });

  it("takes a last line without its newline as torn, as a reopened log does, even when it parses", () => {
    const path = logIn();
    writeRecords(path, [1, 2]);
    appendFileSync(path, '{"id": 3}');
    expect(readEpisodeLog(path)).toMatchObject({ total: 2, torn: true });
    // So a resumed run asks that question again instead of counting it done and setting its line aside.
    expect(new EpisodeLog(path).tornBytes).toBe('{"id": 3}'.length);
    expect(readEpisodeLog(path)).toMatchObject({ total: 2, torn: false });
  });

  it("reading, names the file and line of a bad line that is not the last", () => {
    const path = logIn();
    writeFileSync(path, '{"id": 1}\n{"id": \n{"id": 3}\n');
    const read = () => readEpisodeLog(path);
    expect(read).toThrow(DataError);
    expect(read).toThrow(`${path}:2: not valid JSON`);
  });
});
