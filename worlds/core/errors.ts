/** Bad input: the message always names the file and the line or field at fault. */
export class DataError extends Error {
  readonly file: string;
  readonly line?: number;
  readonly field?: string;
  /** What is wrong, without where. */
  readonly reason: string;

  constructor(file: string, where: { line?: number; field?: string }, message: string) {
    const at = where.line !== undefined ? `:${where.line}` : where.field !== undefined ? ` (${where.field})` : "";
    super(`${file}${at}: ${message}`);
    this.name = "DataError";
    this.file = file;
    this.reason = message;
    if (where.line !== undefined) this.line = where.line;
    if (where.field !== undefined) this.field = where.field;
  }
}

/**
 * A value from the input as an error message quotes it: at most 80 characters, and control
 * characters escaped as JSON writes them (a file with bare \r line ends is one long "line" whose
 * \r characters would otherwise send the terminal's cursor back over the message).
 */
export function clip(s: string): string {
  const short = s.length > 80 ? `${s.slice(0, 77)}...` : s;
  return short.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}
