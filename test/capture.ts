/** Captures what commands under test print, fresh for every test of the file that calls it. */
import { afterEach, beforeEach, vi } from "vitest";

export interface Captured {
  /** stdout of the current test so far. */
  out: string;
  /** stderr of the current test so far. */
  err: string;
}

export function captureOutput(): Captured {
  const io = { out: "", err: "" };
  beforeEach(() => {
    io.out = "";
    io.err = "";
    vi.spyOn(process.stdout, "write").mockImplementation((s) => ((io.out += String(s)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((s) => ((io.err += String(s)), true));
  });
  afterEach(() => vi.restoreAllMocks());
  return io;
}
