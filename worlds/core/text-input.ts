/**
 * Text files as users give them: read as UTF-8, with a byte-order mark at the start dropped and
 * Windows line ends (\r\n) read as \n, so that a file saved by a Windows editor reads exactly like
 * the original. A file that cannot be read is bad input naming it.
 */
import { readFileSync } from "node:fs";
import { DataError } from "./errors.js";

export function readTextInput(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new DataError(file, {}, `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return normalizeText(text);
}

function normalizeText(text: string): string {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return body.includes("\r\n") ? body.replace(/\r\n/g, "\n") : body;
}
