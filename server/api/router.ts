/** The REST API under /api: health, a catalog of what can be run, rooms and runs. */
import { matchMaker } from "@colyseus/core";
import { Router, json } from "express";
import { AGENT_NAMES } from "../../agents/registry.js";
import type { ServerContext } from "../context.js";
import { worldsWith } from "../../worlds/registry.js";
import { errorHandler, notFound } from "./errors.js";
import { roomsRouter } from "./rooms.js";
import { runsRouter } from "./runs.js";
import { trainingRouter } from "./training.js";

export function apiRouter(ctx: ServerContext, adminToken: string, startedAt: Date): Router {
  const r = Router();
  r.use(json({ limit: "64kb" }));
  r.get("/health", (_req, res) => {
    const rooms = [...ctx.rooms.values()].map((room) => room.summary());
    res.json({
      ok: true,
      uptimeS: Math.round((Date.now() - startedAt.getTime()) / 1000),
      rooms: rooms.length,
      clients: rooms.reduce((n, s) => n + s.spectators + s.seats.filter((x) => x.occupied).length, 0),
      rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
      // In a group: this process (its rooms and clients above are its own).
      ...(ctx.group ? { processId: matchMaker.processId, pid: process.pid } : {}),
    });
  });
  r.get("/catalog", async (_req, res) => {
    const [rooms, benchmarks] = await Promise.all([worldsWith("scenario"), worldsWith("benchmark")]);
    res.json({
      worlds: rooms.map((w) => ({ name: w.name, title: w.title, describe: w.scenario!.describe })),
      benchmarks: benchmarks.map((w) => w.name),
      agents: [...AGENT_NAMES, "scripted (simulation seats)", "human (benchmark rooms)"],
    });
  });
  r.use("/rooms", roomsRouter(ctx, adminToken));
  r.use("/runs", runsRouter(ctx, adminToken));
  r.use("/training", trainingRouter(ctx, adminToken));
  r.use(notFound);
  r.use(errorHandler);
  return r;
}
