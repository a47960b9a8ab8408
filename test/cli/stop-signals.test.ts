/**
 * SIGTERM (a job manager's stop) ends a long command as Ctrl-C does: at the next safe point, with
 * the run saved and resumable, and an exit status naming the signal.
 */
import { createServer, type Server } from "node:http";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { onStopSignal } from "../../cli/stop-signals.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { generateTomi } from "../../worlds/tomi/generator.js";

const io = captureOutput();
let server: Server | undefined;
afterEach(() => server?.close());

describe("stop signals", () => {
  it("are caught once: the first stops the command, a second would end the process", () => {
    const before = [process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")];
    let stops = 0;
    const signals = onStopSignal(() => stops++);
    expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).toEqual([before[0]! + 1, before[1]! + 1]);
    process.emit("SIGTERM");
    expect(stops).toBe(1);
    expect(signals.received).toBe("SIGTERM");
    expect(signals.exitCode).toBe(143);
    expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).toEqual(before);
    signals.dispose();
    const other = onStopSignal(() => stops++);
    process.emit("SIGINT");
    expect(other.exitCode).toBe(130);
    expect(stops).toBe(2);
  });

  it("SIGTERM during a benchmark: the run is saved as interrupted and can be resumed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-signals-"));
    const files = await generateTomi(12, 2);
    writeFileSync(join(dir, "g.txt"), files.txt);
    writeFileSync(join(dir, "g.trace"), files.trace);
    // An endpoint that does not answer until the stop: the stop has to reach the question in flight.
    let answering = false;
    let asked!: () => void;
    const firstRequest = new Promise<void>((done) => (asked = done));
    server = createServer((req, res) => {
      req.resume();
      asked();
      if (!answering) return;
      const content = JSON.stringify({ answer: "box" });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] }));
    });
    await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done));
    const port = (server.address() as { port: number }).port;
    const store = join(dir, "store");
    const args = ["bench", "tomi", "--data", join(dir, "g.txt"), "--agent", `llm:m@http://127.0.0.1:${port}/v1?retries=0`, "--store", store, "--quiet"];
    const run = main(args);
    await firstRequest;
    process.emit("SIGTERM");
    expect(await run).toBe(143);
    const [record] = (await RunStore.open(store)).list();
    expect(record).toMatchObject({ kind: "bench", status: "interrupted" });
    // The questions in flight were cut off: they are not logged as failures, but asked on resume.
    expect(io.err).toContain(`interrupted: 0/12 questions logged; continue with --resume ${record!.id}`);

    answering = true;
    const json = join(dir, "r.json");
    expect(await main([...args, "--resume", record!.id, "--json", json])).toBe(0);
    expect(JSON.parse(readFileSync(json, "utf8"))).toMatchObject({ total: 12, errors: { count: 0 } });
    const log = readEpisodeLog<{ result: { id: string } }>((await RunStore.open(store)).episodesPath(record!));
    expect(new Set(log.records.map((r) => r.result.id)).size).toBe(12);
    expect(log.total).toBe(12);
  });
});
