/**
 * Ctrl-C (SIGINT) and a stop request (SIGTERM: what `kill`, Slurm and Kubernetes send before
 * SIGKILL) end a long command the same way: at its next safe point, with what it has done saved
 * and the way to resume it printed. A second signal is not caught: it ends the process at once,
 * for when the safe point is too far away. The exit status names the signal (128 + its number).
 */
const SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
type StopSignal = keyof typeof SIGNALS;

export interface StopSignals {
  /** The signal received, if any. */
  readonly received: StopSignal | undefined;
  /** 130 after SIGINT, 143 after SIGTERM. */
  readonly exitCode: number;
  /** Stops listening (the command is over). */
  dispose(): void;
}

export function onStopSignal(stop: () => void): StopSignals {
  let received: StopSignal | undefined;
  const handlers = Object.keys(SIGNALS).map((name) => {
    const signal = name as StopSignal;
    const handler = () => {
      received = signal;
      dispose();
      stop();
    };
    process.once(signal, handler);
    return [signal, handler] as const;
  });
  const dispose = () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
  return {
    get received() {
      return received;
    },
    get exitCode() {
      return 128 + SIGNALS[received ?? "SIGINT"];
    },
    dispose,
  };
}
