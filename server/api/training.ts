/**
 * /api/training: the training runs the dashboard plots (GET, public) and the door through which a
 * `train grpo --server URL` run elsewhere posts its metrics (POST /events, admin).
 */
import { Router } from "express";
import { z } from "zod";
import type { ServerContext } from "../context.js";
import { TrainingPostSchema } from "../training-board.js";
import { isAdmin, requireAdmin } from "./admin.js";
import { HttpError, parseOr400 } from "./errors.js";

const RunId = z.string().min(1).max(200);

export function trainingRouter(ctx: ServerContext, adminToken: string): Router {
  const r = Router();
  // In a group, the runs of every process (training-board.ts). Self-play rounds of private rooms
  // are on the board for everyone, but only the admin is told which rooms.
  r.get("/", async (req, res) => {
    res.json({ runs: await ctx.training.listAll({ admin: isAdmin(req, adminToken) }) });
  });
  r.get("/:runId", async (req, res) => {
    const id = parseOr400(RunId, req.params.runId, "path parameter runId");
    const run = (await ctx.training.listAll({ admin: isAdmin(req, adminToken) })).find((r) => r.runId === id);
    if (!run) throw new HttpError(404, `no training run "${id}"`);
    res.json(run);
  });
  r.post("/events", requireAdmin(adminToken), (req, res) => {
    const body = parseOr400(TrainingPostSchema, req.body ?? {}, "body");
    if (body.type === "progress") ctx.training.step(body.event, body.event.metrics);
    else ctx.training.finish(body.event.runId, body.event.status);
    res.status(202).json({ ok: true });
  });
  return r;
}
