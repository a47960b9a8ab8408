/**
 * Input files are UTF-8. A file that is not (a Latin-1 or Windows-1252 save, a byte cut from a
 * multi-byte character) is bad input naming the file and the line of the first bad byte; it is
 * never read with U+FFFD in place of the bytes (an answer "green_b\uFFFDx" would be scored against).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readTextInput } from "../../worlds/core/text-input.js";
import { errorOf } from "../data-error.js";

const root = mkdtempSync(join(tmpdir(), "sw-utf8-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(name: string, bytes: Buffer): string {
  const p = join(root, name);
  writeFileSync(p, bytes);
  return p;
}

describe("readTextInput and UTF-8", () => {
  it("reads UTF-8, with a byte-order mark and \\r\\n line ends, and a real U+FFFD, as they are", () => {
    const p = file("ok.txt", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("1 Zoë entered the attic.\r\n2 \uFFFD\r\n", "utf8")]));
    expect(readTextInput(p)).toBe("1 Zoë entered the attic.\n2 \uFFFD\n");
  });

  it("reads an ASCII file (the fast path) exactly as UTF-8 reads it, \\r\\n line ends included", () => {
    const text = "1 Ella entered the garage.\r\n2 Where is the \"box\"?\tgreen_box\t1\r\n\u007f\t~\n";
    const p = file("ascii.txt", Buffer.from(text, "utf8"));
    expect(readTextInput(p)).toBe(text.replace(/\r\n/g, "\n"));
    // One byte past ASCII sends the file down the UTF-8 path, not Latin-1's (0xe9 alone is not UTF-8).
    expect(readTextInput(file("e-acute.txt", Buffer.from("1 Zo\u00eb\n", "utf8")))).toBe("1 Zo\u00eb\n");
    expect(errorOf(() => readTextInput(file("latin1.txt", Buffer.from("1 Zo\u00eb\n", "latin1")))).message).toMatch(/not UTF-8 text/);
  });

  it("refuses bytes that are not UTF-8, naming the line", () => {
    for (const bad of [[0xff], [0xc3], [0x80], [0xed, 0xa0, 0x80], [0xe9]]) {
      const p = file("bad.txt", Buffer.concat([Buffer.from("1 Ella entered the garage.\n2 Where is it?\tgreen_b", "utf8"), Buffer.from(bad), Buffer.from("x\t1\n3 more\n", "utf8")]));
      const err = errorOf(() => readTextInput(p));
      expect(err.file).toBe(p);
      expect(err.line, String(bad)).toBe(2);
      expect(err.message).toMatch(/^.*bad\.txt:2: not UTF-8 text/);
    }
  });
});
