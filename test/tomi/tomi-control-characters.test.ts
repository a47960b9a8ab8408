/**
 * A file saved with bare \r line ends (old Mac style) reads as one long line: the error names
 * line 1 and quotes it with the \r escaped, so the message stays one readable terminal line.
 */
import { describe, expect, it } from "vitest";
import { DataError } from "../../worlds/core/errors.js";
import { parseTomi } from "../../worlds/tomi/babi.js";

describe("ToMi errors quoting control characters", () => {
  it("escapes \\r in the quoted line", () => {
    const text = "1 Ella entered the garage.\r2 The spinach is in the green_crate.\r3 Where is the spinach really?\tgreen_crate\t1\r";
    let err: unknown;
    try {
      parseTomi(text, "mac.txt");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DataError);
    const message = (err as DataError).message;
    expect(message).toMatch(/^mac\.txt:1: /);
    expect(message).not.toMatch(/[\r\t]/);
    expect(message).toContain("garage.\\r2 The");
  });
});
