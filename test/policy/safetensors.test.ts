import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSafetensors, readTensorInto, writeSafetensors } from "../../models/safetensors.js";
import { DataError } from "../../worlds/core/errors.js";
import { tempDir } from "./fixtures.js";

/** A safetensors file written byte by byte from the format's definition. */
function handMade(path: string, entries: { name: string; dtype: string; shape: number[]; bytes: Uint8Array }[]): void {
  const header: Record<string, unknown> = {};
  let off = 0;
  for (const e of entries) {
    header[e.name] = { dtype: e.dtype, shape: e.shape, data_offsets: [off, off + e.bytes.length] };
    off += e.bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(path, Buffer.concat([len, json, ...entries.map((e) => Buffer.from(e.bytes))]));
}

describe("safetensors", () => {
  it("round-trips F32 tensors, with an 8-byte aligned data section and Hugging Face's format metadata", () => {
    const dir = tempDir();
    const path = join(dir, "m.safetensors");
    const a = Float32Array.from([1.5, -2, 3.25, 1e-30, 7, 8]);
    const b = Float64Array.from([0.1, 0.2]);
    writeSafetensors(path, [
      { name: "a", shape: [2, 3], data: a },
      { name: "b.weight", shape: [2], data: b },
    ]);
    const bytes = readFileSync(path);
    const headerLen = Number(bytes.readBigUInt64LE(0));
    expect((8 + headerLen) % 8).toBe(0);
    const f = readSafetensors(path);
    expect(f.metadata).toEqual({ format: "pt" });
    expect(f.tensors.get("a")).toMatchObject({ dtype: "F32", shape: [2, 3] });
    const out = new Float32Array(8);
    readTensorInto(f, "a", [2, 3], out, 1);
    expect(Array.from(out.subarray(1, 7))).toEqual(Array.from(a));
    readTensorInto(f, "b.weight", [2], out, 6);
    expect(out[6]).toBe(Math.fround(0.1));
  });

  it("reads BF16, F16 and F64 tensors (converted)", () => {
    const path = join(tempDir(), "x.safetensors");
    const bf16 = new Uint16Array([0x3fc0, 0xc040, 0x0000]); // 1.5, -3, 0
    const f16 = new Uint16Array([0x3c00, 0xc100, 0x7bff, 0x0001]); // 1, -2.5, 65504, 2^-24
    const f64 = new Float64Array([Math.PI]);
    handMade(path, [
      { name: "x", dtype: "BF16", shape: [3], bytes: new Uint8Array(bf16.buffer) },
      { name: "y", dtype: "F16", shape: [2, 2], bytes: new Uint8Array(f16.buffer) },
      { name: "z", dtype: "F64", shape: [1], bytes: new Uint8Array(f64.buffer) },
    ]);
    const f = readSafetensors(path);
    const out = new Float64Array(8);
    readTensorInto(f, "x", [3], out, 0);
    readTensorInto(f, "y", [2, 2], out, 3);
    readTensorInto(f, "z", [1], out, 7);
    expect(Array.from(out)).toEqual([1.5, -3, 0, 1, -2.5, 65504, 2 ** -24, Math.PI]);
  });

  it("rejects malformed files with the file and the tensor at fault", () => {
    const dir = tempDir();
    const good = join(dir, "g.safetensors");
    writeSafetensors(good, [{ name: "w", shape: [4], data: new Float32Array(4) }]);
    const bytes = readFileSync(good);
    const expectError = (path: string, re: RegExp) => {
      let err: unknown;
      try {
        const f = readSafetensors(path);
        readTensorInto(f, "w", [4], new Float32Array(4), 0);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DataError);
      expect((err as Error).message).toContain(path);
      expect((err as Error).message).toMatch(re);
    };
    const truncated = join(dir, "t.safetensors");
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 3));
    expectError(truncated, /\(w\): data runs past the end of the file/);
    const tiny = join(dir, "tiny.safetensors");
    writeFileSync(tiny, Buffer.from([1, 2, 3]));
    expectError(tiny, /too short/);
    const notJson = join(dir, "nj.safetensors");
    const b = Buffer.from(bytes);
    b[9] = 0x7b; // corrupt the header's JSON
    b[8] = 0x7b;
    writeFileSync(notJson, b);
    expectError(notJson, /header is not valid JSON/);
    const bad = join(dir, "bad.safetensors");
    handMade(bad, [{ name: "w", dtype: "I8", shape: [4], bytes: new Uint8Array(4) }]);
    expectError(bad, /\(w\): unsupported dtype I8/);
    const shape = join(dir, "shape.safetensors");
    handMade(shape, [{ name: "w", dtype: "F32", shape: [5], bytes: new Uint8Array(16) }]);
    expectError(shape, /\(w\): data_offsets .* do not match shape \[5\]/);
    const wrong = join(dir, "wrong.safetensors");
    handMade(wrong, [{ name: "w", dtype: "F32", shape: [2, 2], bytes: new Uint8Array(16) }]);
    expectError(wrong, /\(w\): shape \[2, 2\] does not match the config's \[4\]/);
    const nan = join(dir, "nan.safetensors");
    handMade(nan, [{ name: "w", dtype: "F32", shape: [4], bytes: new Uint8Array(Float32Array.from([0, NaN, 0, 0]).buffer) }]);
    expectError(nan, /non-finite value/);
  });
});
