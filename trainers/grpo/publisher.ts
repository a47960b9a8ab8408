/**
 * Sends a training run's metrics to a running server, which puts them on its socket.io progress
 * stream (`progress` events of kind "trainer") for the web client's training dashboard. Posts go
 * out one at a time in order; a server that cannot be reached costs a note, never the run.
 */
import type { StepMetrics } from "./metrics.js";

export interface TrainerEvent {
  readonly runId: string;
  readonly title: string;
  readonly source: string;
  readonly steps: number;
  readonly metrics: StepMetrics;
}

export class MetricsPublisher {
  private chain: Promise<void> = Promise.resolve();
  private failed = false;
  private readonly url: string;

  constructor(
    server: string,
    private readonly token: string,
    private readonly note: (message: string) => void,
  ) {
    this.url = new URL("/api/training/events", server).toString();
  }

  publish(event: TrainerEvent): void {
    this.send({ type: "progress", event });
  }

  /** Waits for what is queued, then says the run is over. */
  async finish(runId: string, status: "done" | "interrupted" | "failed"): Promise<void> {
    this.send({ type: "finished", event: { runId, status } });
    await this.chain;
  }

  private send(body: unknown): void {
    this.chain = this.chain.then(async () => {
      try {
        const res = await fetch(this.url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${this.token}` },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(5000),
        });
        if (!res.ok) throw new Error(`${res.status} ${(await res.text()).slice(0, 200)}`);
        this.failed = false;
      } catch (err) {
        if (!this.failed) this.note(`could not publish metrics to ${this.url}: ${(err as Error).message} (training goes on)`);
        this.failed = true;
      }
    });
  }
}
