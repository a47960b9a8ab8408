/**
 * A worker thread terminated while one of its models' asynchronous passes is in flight (a
 * self-play round stopped after its grace period, a server shutting down) must end that thread
 * only. The pass finishes on libuv's pool after the thread's environment is gone, and settling its
 * promise there cannot run JavaScript: node-addon-api then threw a C++ exception nobody could
 * catch, and std::terminate took the whole process down ("terminate called after throwing an
 * instance of 'Napi::Error'"). binding.gyp's NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS drops what an
 * ending environment cannot receive.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nativeDir } from "../../models/native.js";
import { tempDir } from "../policy/fixtures.js";

const SCRIPT = `
import { Worker, isMainThread, workerData } from "node:worker_threads";
import { createRequire } from "node:module";
if (isMainThread) {
  for (let i = 0; i < 8; i++) {
    const w = new Worker(new URL(import.meta.url), { workerData: process.argv[2] });
    // Wait for the first pass to start, then stop the thread at a different point of a pass each time.
    await new Promise((resolve) => w.once("message", resolve));
    await new Promise((resolve) => setTimeout(resolve, 3 * i));
    await w.terminate();
  }
  console.log("the process outlived its workers");
} else {
  const { Model } = createRequire(import.meta.url)(workerData);
  const m = new Model({ vocabSize: 512, hiddenSize: 64, numLayers: 4, numHeads: 4, numKvHeads: 2, headDim: 16, intermediateSize: 192, maxPositionEmbeddings: 256 });
  const tokens = new Int32Array(4 * 256).fill(3), targets = new Int32Array(4 * 256).fill(4);
  for (let k = 0; ; k++) {
    const pass = m.forwardBackwardAsync(tokens, targets, null, 4, 256, true);
    if (k === 0) (await import("node:worker_threads")).parentPort.postMessage("started");
    await pass;
  }
}
`;

describe("a worker thread stopped during an asynchronous pass", () => {
  it("ends that thread, not the process", () => {
    const file = join(tempDir("sw-worker-"), "terminate.mjs");
    writeFileSync(file, SCRIPT);
    const addon = join(nativeDir(), "build", "Release", "socialworld_native.node");
    const r = spawnSync(process.execPath, [file, addon], { encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).not.toMatch(/terminate called/);
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
    expect(r.stdout).toContain("the process outlived its workers");
  }, 90_000);
});
