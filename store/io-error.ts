/**
 * Node's errors from calls on a file descriptor (write, fsync, close) name no file: a full disk
 * mid-run reads "ENOSPC: no space left on device, write", and the user cannot tell which of the
 * run's files it was. These helpers put the file's path in the message, keeping the error itself
 * (its code and syscall), so the command line still reports it as a system error in one line.
 */

/** `err` with `path` in its message (and as its `path`), where it named none or a temporary file. */
export function withPath(err: unknown, path: string, temporary?: string): unknown {
  if (!(err instanceof Error) || typeof (err as NodeJS.ErrnoException).code !== "string") return err;
  const e = err as NodeJS.ErrnoException;
  // A temporary file's name means nothing to the user: name the file it stood for.
  if (temporary !== undefined && e.message.includes(temporary)) e.message = e.message.split(temporary).join(path);
  if (!e.message.includes(path)) e.message = `${e.message} (${path})`;
  e.path = path;
  return e;
}

/** Runs `io`, naming `path` in any system error it throws. */
export function naming<T>(path: string, io: () => T): T {
  try {
    return io();
  } catch (err) {
    throw withPath(err, path);
  }
}
