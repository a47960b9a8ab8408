import { WebSocketTransport } from "@colyseus/ws-transport";
import { recordClientAddress } from "./security/client-address.js";

/**
 * WebSocket protocol errors are the client's (a frame over maxPayload, invalid UTF-8 in a text
 * frame, an unmasked frame): ws closes that connection itself (1009, 1007, 1002). The Colyseus
 * transport printed each one with a stack trace; here they are dropped quietly (the listener ws
 * needs stays, so an 'error' event never goes unhandled).
 */
export class QuietWebSocketTransport extends WebSocketTransport {
  protected override onConnection(...args: Parameters<WebSocketTransport["onConnection"]>): Promise<void> {
    const [rawClient, req] = args;
    // Rooms limit messages by the address a client connects from (security/client-guard.ts).
    recordClientAddress(rawClient, req);
    const before = new Set(rawClient.listeners("error"));
    const done = super.onConnection(...args);
    // The transport adds its printing listener synchronously, before its first await.
    for (const l of rawClient.listeners("error")) if (!before.has(l)) rawClient.off("error", l as (...a: unknown[]) => void);
    rawClient.on("error", () => undefined);
    return done;
  }
}
