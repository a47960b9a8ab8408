/**
 * The files of a ZIP archive (PKWARE APPNOTE 6.3), read from its central directory: stored and
 * deflated entries, each checked against its CRC-32. Enough for the archives benchmarks publish
 * (no ZIP64, no encryption: either is an error, never a wrong file).
 */
import { crc32, inflateRawSync } from "node:zlib";
import { ArchiveError, type ArchiveEntry } from "./archive-entry.js";

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** Every file in the archive (folders left out), in the central directory's order. */
export function readZip(buf: Buffer, name: string): ArchiveEntry[] {
  // The end record is in the last 22 + 65535 (comment) bytes.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ArchiveError(name, "not a ZIP archive (no end of central directory record)");
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || at === 0xffffffff) throw new ArchiveError(name, "ZIP64 archives are not read");
  const out: ArchiveEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== CENTRAL) throw new ArchiveError(name, `central directory entry ${n + 1} is damaged`);
    const flags = buf.readUInt16LE(at + 8);
    const method = buf.readUInt16LE(at + 10);
    const crc = buf.readUInt32LE(at + 16);
    const compressed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const path = buf.toString(flags & 0x800 ? "utf8" : "latin1", at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    if (path.endsWith("/")) continue;
    if (flags & 0x1) throw new ArchiveError(name, `${path} is encrypted`);
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== LOCAL) throw new ArchiveError(name, `${path}: local header is damaged`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + compressed);
    if (raw.length !== compressed) throw new ArchiveError(name, `${path} is cut off`);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) {
      try {
        data = inflateRawSync(raw);
      } catch (err) {
        throw new ArchiveError(name, `${path} does not inflate (${(err as Error).message})`);
      }
    } else throw new ArchiveError(name, `${path} uses compression method ${method} (only stored and deflated are read)`);
    if (data.length !== size || crc32(data) !== crc) throw new ArchiveError(name, `${path} fails its CRC-32 check`);
    out.push({ path, data });
  }
  return out;
}
