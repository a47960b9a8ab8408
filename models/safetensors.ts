/**
 * The safetensors format: an 8-byte little-endian header length, a JSON header mapping each
 * tensor name to {dtype, shape, data_offsets}, then the raw little-endian data. Reads F32, F16,
 * BF16 and F64 (converted to the engine's precision); writes F32. Sharded checkpoints
 * (model.safetensors.index.json) are read too.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { replaceFile } from "../store/write-atomic.js";
import { DataError } from "../worlds/core/errors.js";
import type { FloatArray } from "./native.js";

const DTYPE_BYTES = { F32: 4, F16: 2, BF16: 2, F64: 8 } as const;
type Dtype = keyof typeof DTYPE_BYTES;

const EntrySchema = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
});

export interface TensorEntry {
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  readonly begin: number;
  readonly end: number;
}

export interface SafetensorsFile {
  readonly path: string;
  readonly tensors: ReadonlyMap<string, TensorEntry>;
  readonly metadata: Readonly<Record<string, string>>;
  readonly bytes: Buffer;
  /** Where the data section starts in `bytes`. */
  readonly dataStart: number;
}

export function readSafetensors(path: string): SafetensorsFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new DataError(path, {}, `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (bytes.length < 8) throw new DataError(path, {}, `not a safetensors file (${bytes.length} bytes, too short for the header length)`);
  const headerLen = Number(bytes.readBigUInt64LE(0));
  if (headerLen > bytes.length - 8 || headerLen > 100_000_000)
    throw new DataError(path, {}, `not a safetensors file (header length ${headerLen} does not fit in ${bytes.length} bytes): truncated or another format`);
  let header: unknown;
  try {
    header = JSON.parse(bytes.subarray(8, 8 + headerLen).toString("utf8"));
  } catch {
    throw new DataError(path, {}, "the safetensors header is not valid JSON");
  }
  if (!header || typeof header !== "object" || Array.isArray(header)) throw new DataError(path, {}, "the safetensors header is not a JSON object");
  const dataStart = 8 + headerLen;
  const dataLen = bytes.length - dataStart;
  const tensors = new Map<string, TensorEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") {
      metadata = (raw ?? {}) as Record<string, string>;
      continue;
    }
    const r = EntrySchema.safeParse(raw);
    if (!r.success) throw new DataError(path, { field: name }, `bad header entry: ${r.error.issues[0]!.message} at ${r.error.issues[0]!.path.join(".")}`);
    const { dtype, shape, data_offsets } = r.data;
    if (!(dtype in DTYPE_BYTES)) throw new DataError(path, { field: name }, `unsupported dtype ${dtype} (supported: ${Object.keys(DTYPE_BYTES).join(", ")})`);
    const [begin, end] = data_offsets;
    const count = shape.reduce((a, b) => a * b, 1);
    if (end < begin || end - begin !== count * DTYPE_BYTES[dtype as Dtype])
      throw new DataError(path, { field: name }, `data_offsets [${begin}, ${end}] do not match shape [${shape.join(", ")}] of ${dtype}`);
    if (end > dataLen) throw new DataError(path, { field: name }, `data runs past the end of the file (offset ${end} > ${dataLen} data bytes): the file is truncated`);
    tensors.set(name, { dtype: dtype as Dtype, shape, begin, end });
  }
  return { path, tensors, metadata, bytes, dataStart };
}

/** Copies (and converts) tensor `name` into dest[offset ...], checking its shape. */
export function readTensorInto(file: SafetensorsFile, name: string, shape: readonly number[], dest: FloatArray, offset: number): void {
  const e = file.tensors.get(name);
  if (!e) throw new DataError(file.path, { field: name }, "tensor missing from the checkpoint");
  if (e.shape.length !== shape.length || e.shape.some((d, i) => d !== shape[i]))
    throw new DataError(file.path, { field: name }, `shape [${e.shape.join(", ")}] does not match the config's [${shape.join(", ")}]`);
  const n = e.shape.reduce((a, b) => a * b, 1);
  const at = file.dataStart + e.begin;
  // Copy out first: the data section need not be aligned for a typed-array view.
  const raw = file.bytes.subarray(at, at + (e.end - e.begin));
  const aligned = new Uint8Array(raw.length);
  aligned.set(raw);
  const out = dest.subarray(offset, offset + n);
  switch (e.dtype) {
    case "F32":
      out.set(new Float32Array(aligned.buffer, 0, n));
      break;
    case "F64":
      out.set(new Float64Array(aligned.buffer, 0, n));
      break;
    case "BF16": {
      const src = new Uint16Array(aligned.buffer, 0, n);
      const bits = new Uint32Array(1);
      const f = new Float32Array(bits.buffer);
      for (let i = 0; i < n; i++) {
        bits[0] = src[i]! << 16;
        out[i] = f[0]!;
      }
      break;
    }
    case "F16": {
      const src = new Uint16Array(aligned.buffer, 0, n);
      for (let i = 0; i < n; i++) out[i] = halfToFloat(src[i]!);
      break;
    }
  }
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(out[i]!)) throw new DataError(file.path, { field: name }, `holds a non-finite value (${out[i]}) at element ${i}`);
  }
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** The checkpoint's weights: model.safetensors, or the shards named by model.safetensors.index.json. */
export class WeightFiles {
  private readonly files = new Map<string, SafetensorsFile>();
  private readonly where = new Map<string, string>();

  constructor(readonly dir: string) {
    const single = join(dir, "model.safetensors");
    const index = join(dir, "model.safetensors.index.json");
    if (existsSync(single)) {
      const f = readSafetensors(single);
      this.files.set(single, f);
      for (const name of f.tensors.keys()) this.where.set(name, single);
    } else if (existsSync(index)) {
      let map: Record<string, string>;
      try {
        map = z.object({ weight_map: z.record(z.string(), z.string()) }).parse(JSON.parse(readFileSync(index, "utf8"))).weight_map;
      } catch (err) {
        throw new DataError(index, { field: "weight_map" }, `not a safetensors index: ${(err as Error).message.split("\n")[0]}`);
      }
      for (const [name, shard] of Object.entries(map)) this.where.set(name, join(dir, shard));
    } else {
      throw new DataError(single, {}, "no weights: neither model.safetensors nor model.safetensors.index.json is in the checkpoint folder");
    }
  }

  has(name: string): boolean {
    return this.where.has(name);
  }

  names(): string[] {
    return [...this.where.keys()];
  }

  readInto(name: string, shape: readonly number[], dest: FloatArray, offset: number): void {
    const path = this.where.get(name);
    if (!path) throw new DataError(join(this.dir, "model.safetensors"), { field: name }, "tensor missing from the checkpoint");
    let file = this.files.get(path);
    if (!file) {
      file = readSafetensors(path);
      this.files.set(path, file);
    }
    readTensorInto(file, name, shape, dest, offset);
  }
}

export interface TensorToWrite {
  readonly name: string;
  readonly shape: readonly number[];
  readonly data: FloatArray;
}

/** Writes F32 tensors (converting float64 input), atomically: a crash leaves the old file. */
export function writeSafetensors(path: string, tensors: readonly TensorToWrite[], metadata: Record<string, string> = { format: "pt" }): void {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`tensor ${t.name}: shape [${t.shape.join(", ")}] does not hold ${t.data.length} values`);
    header[t.name] = { dtype: "F32", shape: t.shape, data_offsets: [offset, offset + 4 * n] };
    offset += 4 * n;
  }
  let json = JSON.stringify(header);
  // Pad the header with spaces so the data starts 8-byte aligned.
  json += " ".repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const head = Buffer.alloc(8 + Buffer.byteLength(json));
  head.writeBigUInt64LE(BigInt(Buffer.byteLength(json)), 0);
  head.write(json, 8, "utf8");
  replaceFile(path, (tmp) => {
    const fd = openSync(tmp, "w");
    try {
      writeSync(fd, head);
      for (const t of tensors) {
        const f32 = t.data instanceof Float32Array ? t.data : Float32Array.from(t.data);
        writeSync(fd, new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength));
      }
    } finally {
      closeSync(fd);
    }
  });
}
