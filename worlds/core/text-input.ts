/**
 * Text files as users give them: read as UTF-8, with a byte-order mark at the start dropped and
 * Windows line ends (\r\n) read as \n, so that a file saved by a Windows editor reads exactly like
 * the original. A file that cannot be read, or is not UTF-8, is bad input naming it (and the line
 * of the first byte that is not UTF-8: read with U+FFFD in its place, a label would silently change).
 */
import { readFileSync, statSync } from "node:fs";
import { isAscii, isUtf8 } from "node:buffer";
import { DataError } from "./errors.js";

export function readTextInput(file: string): string {
  let bytes: Buffer;
  try {
    // A device or a pipe is not read: /dev/zero never ends (memory grows until the process dies)
    // and a FIFO without a writer blocks the process forever. (stat follows links and opens nothing.)
    const st = statSync(file);
    if (!st.isFile()) throw new DataError(file, {}, `not a regular file (${st.isDirectory() ? "a folder" : st.isFIFO() ? "a pipe" : st.isCharacterDevice() || st.isBlockDevice() ? "a device" : "a socket"}): give a file`);
    bytes = readFileSync(file);
  } catch (err) {
    if (err instanceof DataError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new DataError(file, {}, "file not found");
    if (code === "ELOOP") throw new DataError(file, {}, "cannot read: ELOOP (a loop of symbolic links)");
    throw new DataError(file, {}, `cannot read: ${code ?? (err as Error).message}`);
  }
  // Benchmark files are ASCII: one vectorized scan says so, and their bytes are then the string's
  // characters as they are (a copy), with no UTF-8 to check or decode (a ToMi val file and its
  // trace, 2.6 MB: a few milliseconds). Anything else is checked as UTF-8 and decoded.
  if (isAscii(bytes)) return normalizeText(bytes.toString("latin1"));
  if (!isUtf8(bytes)) throw notUtf8(file, bytes);
  return normalizeText(bytes.toString("utf8"));
}

/** Where the first byte that is not UTF-8 is: lines are checked one at a time (no UTF-8 sequence holds a \n byte). */
function notUtf8(file: string, bytes: Buffer): DataError {
  let line = 1;
  for (let start = 0; start < bytes.length; line++) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    if (!isUtf8(bytes.subarray(start, end))) return new DataError(file, { line }, "not UTF-8 text: save the file as UTF-8");
    start = end + 1;
  }
  return new DataError(file, {}, "not UTF-8 text: save the file as UTF-8");
}

function normalizeText(text: string): string {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return body.includes("\r\n") ? body.replace(/\r\n/g, "\n") : body;
}
