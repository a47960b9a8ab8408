/**
 * `socialworld serve-policy`: the OpenAI-compatible API of one or more policy checkpoints as a
 * server of its own (no rooms, no store), so that Sotopia, the social-world-model scripts or any
 * OpenAI client can use a trained policy at http://HOST:PORT/v1.
 *
 *   GET  /v1/models, /v1/models/:id
 *   POST /v1/chat/completions        (stream: true for server-sent events)
 *   GET  /health                     {ok, models: [{id, dir, loaded, stats}]}
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { repeatedId, type ServedModel } from "./models.js";
import { OpenAiService } from "./service.js";
import { v1Exposure, type V1Exposure } from "../security/v1-exposure.js";

export interface PolicyServerOptions {
  readonly models: readonly ServedModel[];
  readonly port: number;
  readonly host: string;
  readonly apiKey?: string;
  readonly maxBatch?: number;
  readonly maxWaiting?: number;
  /** Chat requests one client (address) may have in progress (default 32). */
  readonly maxPerClient?: number;
  /** Serve without a key on an address other than loopback (`--open`; the command says so loudly). */
  readonly open?: boolean;
  /** false: response_format is checked after sampling, not enforced while sampling. */
  readonly enforceFormat?: boolean;
}

export interface PolicyServer {
  /** The API root clients take as their base URL: http://HOST:PORT/v1 */
  readonly baseUrl: string;
  readonly port: number;
  readonly service: OpenAiService;
  /** Who may use the API: this machine only, holders of the key, or anyone who can reach the port. */
  readonly exposure: V1Exposure;
  close(): Promise<void>;
}

export async function startPolicyServer(opts: PolicyServerOptions): Promise<PolicyServer> {
  const twice = repeatedId(opts.models);
  if (twice !== undefined) throw new Error(`two models are served as "${twice}": name them apart (ID=DIR)`);
  const exposure = v1Exposure(opts.host, opts.apiKey, opts.open ?? false, "--open");
  const models = [...opts.models];
  const service = new OpenAiService({
    models: () => models,
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    ...(opts.maxBatch !== undefined ? { maxBatch: opts.maxBatch } : {}),
    ...(opts.maxWaiting !== undefined ? { maxWaiting: opts.maxWaiting } : {}),
    ...(opts.maxPerClient !== undefined ? { maxPerClient: opts.maxPerClient } : {}),
    ...(opts.enforceFormat !== undefined ? { enforceFormat: opts.enforceFormat } : {}),
  });
  try {
    await service.preload();
  } catch (err) {
    await service.close();
    throw err;
  }
  const app = express();
  app.disable("x-powered-by");
  app.use("/v1", service.router);
  app.get("/health", (_req, res) => {
    res.json({ ok: true, models: service.health() });
  });
  app.use((req, res) => {
    res.status(404).json({ error: { message: `no route ${req.method} ${req.path} (the API is under /v1)`, type: "invalid_request_error", param: null, code: "unknown_url" } });
  });
  const http: HttpServer = createServer(app);
  await new Promise<void>((done, fail) => {
    http.once("error", fail);
    http.listen(opts.port, opts.host, () => {
      http.off("error", fail);
      done();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const host = opts.host === "0.0.0.0" || opts.host === "::" ? "localhost" : opts.host;
  const baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}/v1`;
  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    port,
    service,
    exposure,
    close: () =>
      (closing ??= (async () => {
        const stopped = service.close();
        http.closeAllConnections();
        await stopped;
        await new Promise<void>((done) => http.close(() => done()));
      })()),
  };
}
