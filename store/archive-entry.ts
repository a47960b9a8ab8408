/** What the archive readers (zip-archive.ts, tar-archive.ts) give, and how they fail. */

/** One file of an archive: its path inside the archive, and its bytes. */
export interface ArchiveEntry {
  readonly path: string;
  readonly data: Buffer;
}

/** A damaged or unreadable archive: the message names it and the entry at fault. */
export class ArchiveError extends Error {
  constructor(archive: string, message: string) {
    super(`${archive}: ${message}`);
    this.name = "ArchiveError";
  }
}
