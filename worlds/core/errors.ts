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
