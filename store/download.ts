/**
 * A file fetched over HTTP(S) into place whole: the bytes go to `<file>.part`, a download cut off
 * is taken up where it stopped (an HTTP Range request; a server that ignores it sends the whole
 * file again, and the part is started over), and only a file whose SHA-256 is the one expected is
 * renamed to its name. A reader never sees half a file, and a file that fails its checksum never
 * takes the place of anything.
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { withPath } from "./io-error.js";

/** The download failed (the server, the network, or the bytes): the message names the URL. */
export class DownloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DownloadError";
  }
}

export interface DownloadOptions {
  /** The SHA-256 (hex) the file must have; null where nobody published one (then only `size` is checked, if given). */
  readonly sha256: string | null;
  readonly size?: number;
  /** Called as bytes arrive: those on disk so far, and the total when known. */
  readonly onProgress?: (done: number, total: number | undefined) => void;
  readonly signal?: AbortSignal;
}

/** What `download` did. */
export interface Downloaded {
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
  /** Bytes that were already there from an earlier, interrupted download. */
  readonly resumedFrom: number;
  /** The file was already there with the right checksum: nothing was fetched. */
  readonly cached: boolean;
}

/** The SHA-256 of a file, read as a stream (hex). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Fetches `url` to `path` (see the file's comment). */
export async function download(url: string, path: string, o: DownloadOptions): Promise<Downloaded> {
  if (statSync(path, { throwIfNoEntry: false })?.isFile()) {
    const have = await sha256File(path);
    if (o.sha256 === null ? o.size === undefined || statSync(path).size === o.size : have === o.sha256) {
      return { path, sha256: have, bytes: statSync(path).size, resumedFrom: 0, cached: true };
    }
    // A file of that name that is not the one expected is not overwritten: the user may have put it there.
    throw new DownloadError(`${path} is already there but is not the file expected (${describeMismatch(o, have, statSync(path).size)}); move it away and run again`);
  }
  mkdirSync(dirname(path), { recursive: true });
  const part = `${path}.part`;
  const resumedFrom = statSync(part, { throwIfNoEntry: false })?.size ?? 0;
  let response: Response;
  try {
    response = await fetch(url, { headers: resumedFrom > 0 ? { Range: `bytes=${resumedFrom}-` } : {}, ...(o.signal ? { signal: o.signal } : {}) });
  } catch (err) {
    throw new DownloadError(`${url}: ${networkReason(err)}`);
  }
  let offset = 0;
  if (response.status === 206 && resumedFrom > 0 && contentRangeStart(response) === resumedFrom) offset = resumedFrom;
  else if (response.status === 416 && resumedFrom > 0) {
    // The part already holds every byte (the rename was what was interrupted): check it below.
    await response.body?.cancel();
    offset = resumedFrom;
  } else if (response.status !== 200) {
    await response.body?.cancel();
    throw new DownloadError(`${url}: the server answered ${response.status} ${response.statusText}`.trimEnd());
  }
  const length = Number(response.headers.get("content-length"));
  const total = response.status === 416 ? offset : Number.isFinite(length) && length > 0 ? offset + length : o.size;
  let done = offset;
  const fd = (() => {
    try {
      return openSync(part, offset > 0 ? "a" : "w");
    } catch (err) {
      throw withPath(err, part);
    }
  })();
  try {
    if (response.status !== 416 && response.body) {
      o.onProgress?.(done, total);
      try {
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          writeAll(fd, chunk, part);
          done += chunk.length;
          o.onProgress?.(done, total);
        }
      } catch (err) {
        if (isSystemError(err)) throw err;
        throw new DownloadError(`${url}: the download stopped after ${done} bytes (${networkReason(err)}); run the command again to take it up from there`);
      }
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (total !== undefined && done !== total) {
    throw new DownloadError(`${url}: the download stopped after ${done} of ${total} bytes; run the command again to take it up from there`);
  }
  const sha256 = await sha256File(part);
  const bytes = statSync(part).size;
  const ok = o.sha256 === null ? o.size === undefined || bytes === o.size : sha256 === o.sha256;
  if (!ok) {
    // A part that does not check out cannot be resumed into one that does: start over next time.
    rmSync(part, { force: true });
    throw new DownloadError(`${url}: the file downloaded is not the one published (${describeMismatch(o, sha256, bytes)}); nothing was kept`);
  }
  try {
    renameSync(part, path);
  } catch (err) {
    throw withPath(err, path, part);
  }
  return { path, sha256, bytes, resumedFrom: offset, cached: false };
}

function describeMismatch(o: DownloadOptions, sha256: string, bytes: number): string {
  if (o.sha256 !== null) return `SHA-256 ${sha256}, expected ${o.sha256}`;
  return `${bytes} bytes, expected ${o.size}`;
}

function contentRangeStart(response: Response): number | undefined {
  const m = /^bytes (\d+)-/.exec(response.headers.get("content-range") ?? "");
  return m ? Number(m[1]) : undefined;
}

function writeAll(fd: number, chunk: Uint8Array, path: string): void {
  try {
    for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at, chunk.length - at);
  } catch (err) {
    throw withPath(err, path);
  }
}

/** fetch's "fetch failed" hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, a reset). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message && !cause.message.includes(cause.code) ? ` (${cause.message})` : ""}`;
  return cause?.message ?? (err as Error).message ?? String(err);
}

function isSystemError(err: unknown): boolean {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === "string";
}
