/**
 * Colyseus's room code reads the browser's global `WebSocket` (its `OPEN` constant, when a
 * client reconnects with its reconnection token). Node 22 has that global; Node 20, which this
 * project supports, does not, and every reconnection failed there with "WebSocket is not
 * defined" and lost its seat. Where the global is missing it is the `ws` package's class, the
 * one the transport uses, whose constants are the same.
 */
import WebSocket from "ws";

export function provideWebSocketGlobal(): void {
  const g = globalThis as { WebSocket?: unknown };
  g.WebSocket ??= WebSocket;
}
