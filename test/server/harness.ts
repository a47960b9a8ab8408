/**
 * A real server on a free loopback port with a fresh store, and SDK clients whose sockets record
 * every byte they receive (the Node WebSocket is wrapped before the SDK loads).
 */
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import type { Client as SdkClient, Room as SdkRoom } from "@colyseus/sdk";
import { startServer, type RunningServer } from "../../server/main.js";
import type { ServerConfig } from "../../server/config.js";

export { until } from "./raw-client.js";

export const ADMIN = "test-admin-token-0123456789";

class RecordingWebSocket extends WebSocket {
  readonly frames: Uint8Array[] = [];
  constructor(url: string, protocols?: unknown, options?: unknown) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    super(url, protocols as any, options as any);
    this.on("message", (data: Buffer) => this.frames.push(new Uint8Array(data)));
  }
}
(globalThis as { WebSocket?: unknown }).WebSocket = RecordingWebSocket;
const sdk = await import("@colyseus/sdk");

export interface TestServer {
  readonly server: RunningServer;
  readonly base: string;
  readonly store: string;
  readonly dataRoot: string;
  api(path: string, init?: { method?: string; body?: unknown; admin?: boolean | string; raw?: string }): Promise<{ status: number; json: any; text: string }>;
  client(): SdkClient;
  /** Joins a room; messages without a handler of their own are kept quiet (the frames keep them). */
  join(roomId: string, options?: Record<string, unknown>): Promise<SdkRoom>;
  close(): Promise<void>;
}

export async function startTestServer(opts: { clientDir?: string; config?: Partial<ServerConfig> } = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "sw-server-"));
  const store = join(dir, "store");
  const dataRoot = join(dir, "datasets");
  mkdirSync(dataRoot, { recursive: true });
  const server = await startServer({ port: 0, host: "127.0.0.1", store, adminToken: ADMIN, dataRoots: [dataRoot], demo: false, clientDir: opts.clientDir ?? join(dir, "no-client"), ...opts.config });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    server,
    base,
    store,
    dataRoot,
    async api(path, init = {}) {
      const headers: Record<string, string> = {};
      if (init.body !== undefined || init.raw !== undefined) headers["content-type"] = "application/json";
      if (init.admin) headers.authorization = `Bearer ${typeof init.admin === "string" ? init.admin : ADMIN}`;
      const res = await fetch(base + path, {
        method: init.method ?? "GET",
        headers,
        ...(init.raw !== undefined ? { body: init.raw } : init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      });
      const text = await res.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, json, text };
    },
    client: () => new sdk.Client(base),
    async join(roomId, options = {}) {
      const room = await new sdk.Client(base).joinById(roomId, options);
      room.onMessage("*", () => {});
      return room;
    },
    close: () => server.close(),
  };
}

/** The bytes a joined room's socket has received so far (the live array: it keeps growing). */
export function framesOf(room: SdkRoom): Uint8Array[] {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const ws = (room as any).connection.transport.ws as RecordingWebSocket;
  return ws.frames;
}

/** Messages of `type` a room has received, as they arrive. */
export function collect<T = any>(room: SdkRoom, type: string): T[] {
  const out: T[] = [];
  room.onMessage(type, (m: T) => out.push(m));
  return out;
}

export interface ProgressListener {
  /** Every event received so far, in order (the snapshot on connecting as type "snapshot"). */
  readonly events: { type: string; event: any }[];
  readonly socket: import("socket.io-client").Socket;
  close(): void;
}

/** Connects to the socket.io progress namespace (with a token, when given) and records its events. */
export async function listenToProgress(ts: TestServer, token?: string): Promise<ProgressListener> {
  const { io } = await import("socket.io-client");
  const socket = io(`${ts.base}/progress`, { transports: ["websocket"], ...(token ? { auth: { token } } : {}) });
  const events: { type: string; event: any }[] = [];
  for (const type of ["progress", "finished"]) socket.on(type, (event: unknown) => events.push({ type, event }));
  socket.on("snapshot", (list: unknown[]) => list.forEach((event) => events.push({ type: "snapshot", event })));
  await new Promise<void>((done) => socket.on("connect", () => done()));
  return { events, socket, close: () => socket.close() };
}
