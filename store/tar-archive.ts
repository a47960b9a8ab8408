/**
 * The files of a tar archive (POSIX ustar, with pax and GNU long names), gzipped or not. Only
 * regular files come out; links, devices and the like are left out.
 */
import { gunzipSync } from "node:zlib";
import { ArchiveError, type ArchiveEntry } from "./archive-entry.js";

export function readTarGz(buf: Buffer, name: string): ArchiveEntry[] {
  let tar: Buffer;
  try {
    tar = gunzipSync(buf);
  } catch (err) {
    throw new ArchiveError(name, `not a gzip file (${(err as Error).message})`);
  }
  return readTar(tar, name);
}

export function readTar(buf: Buffer, name: string): ArchiveEntry[] {
  const out: ArchiveEntry[] = [];
  let longName: string | undefined;
  for (let at = 0; at + 512 <= buf.length; ) {
    const header = buf.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    if (checksum(header) !== octal(header, 148, 8)) throw new ArchiveError(name, `the header at byte ${at} fails its checksum`);
    const size = octal(header, 124, 12);
    const type = String.fromCharCode(header[156]!);
    const body = buf.subarray(at + 512, at + 512 + size);
    if (body.length !== size) throw new ArchiveError(name, `the entry at byte ${at} is cut off`);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") {
      longName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString("utf8"))?.[1] ?? longName;
      continue;
    }
    if (type === "L") {
      longName = body.toString("utf8").replace(/\0.*$/s, "");
      continue;
    }
    if (type === "g") continue;
    const prefix = text(header, 345, 155);
    const path = longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    longName = undefined;
    if (type === "0" || type === "\0") out.push({ path, data: Buffer.from(body) });
  }
  return out;
}

function text(b: Buffer, at: number, len: number): string {
  return b.toString("utf8", at, at + len).replace(/\0.*$/s, "");
}

function octal(b: Buffer, at: number, len: number): number {
  const s = text(b, at, len).trim();
  return s ? parseInt(s, 8) : 0;
}

/** The header's checksum: its bytes summed with the checksum field read as spaces. */
function checksum(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
  return sum;
}
