/**
 * An agent spec (`--agent`, a room's agent option) that names no agent or gives it a bad option.
 * Its own class so that commands can report it against the flag instead of as a crash.
 */
export class AgentSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentSpecError";
  }
}
