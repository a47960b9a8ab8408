/**
 * /api/rooms: list the live rooms (public; private ones only with the admin token), create a room
 * and stop one (admin). Creating validates the options with the room's own zod schema first, so a
 * bad option is a 400 naming the field. In a group of processes every process answers for every
 * room (group/group-rooms.ts), and a new room goes to the process with the fewest (Colyseus's choice).
 */
import { matchMaker } from "@colyseus/core";
import { Router } from "express";
import { z } from "zod";
import type { ServerContext } from "../context.js";
import { resolveDataPath } from "../data-path.js";
import { ROOM_TYPES } from "../protocol.js";
import type { BaseRoom } from "../rooms/base-room.js";
import { roomSummaries, roomSummary, stopRoom } from "../group/group-rooms.js";
import { BenchmarkOptionsSchema, SimulationOptionsSchema, SocialOptionsSchema } from "../rooms/options.js";
import { isAdmin, requireAdmin } from "./admin.js";
import { HttpError, parseOr400 } from "./errors.js";

export const RoomIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "not a room id");

const CreateBody = z.strictObject({
  type: z.enum(ROOM_TYPES),
  options: z.record(z.string(), z.unknown()).default({}),
});

export function roomsRouter(ctx: ServerContext, adminToken: string): Router {
  const r = Router();

  r.get("/", async (req, res) => {
    const admin = isAdmin(req, adminToken);
    const rooms = (await roomSummaries(ctx)).filter((s) => admin || s.visibility === "public");
    res.json({ rooms });
  });

  r.get("/:roomId", async (req, res) => {
    const id = parseOr400(RoomIdSchema, req.params.roomId, "path parameter roomId");
    const summary = await roomSummary(ctx, id);
    if (!summary || (summary.visibility === "private" && !isAdmin(req, adminToken))) throw new HttpError(404, `no room "${id}"`);
    res.json(summary);
  });

  r.post("/", requireAdmin(adminToken), async (req, res) => {
    const body = parseOr400(CreateBody, req.body ?? {}, "body");
    const schema = { simulation: SimulationOptionsSchema, benchmark: BenchmarkOptionsSchema, social: SocialOptionsSchema }[body.type];
    const options = parseOr400(schema, body.options, `${body.type} options`);
    // A data path outside the data folders is refused here, before a room is made.
    if ("data" in options && options.data !== undefined) {
      try {
        resolveDataPath(options.data, ctx.dataRoots);
      } catch (err) {
        throw new HttpError(400, (err as Error).message);
      }
    }
    let listing;
    try {
      listing = await matchMaker.createRoom(body.type, body.options);
    } catch (err) {
      // The room refused its options or its data (a path outside the data folders, a bad file).
      throw new HttpError(400, `could not create the ${body.type} room: ${(err as Error).message}`);
    }
    // Kept in the store by the process that hosts it: the room comes back if the server is killed or restarted.
    const room = matchMaker.getLocalRoomById(listing.roomId) as unknown as BaseRoom | undefined;
    const created = room ? await room.keep() : await matchMaker.remoteRoomCall(listing.roomId, "keep");
    res.status(201).json(created);
  });

  r.delete("/:roomId", requireAdmin(adminToken), async (req, res) => {
    const id = parseOr400(RoomIdSchema, req.params.roomId, "path parameter roomId");
    if (!(await stopRoom(ctx, id, "stopped by an admin"))) throw new HttpError(404, `no room "${id}"`);
    res.json({ stopped: id });
  });

  return r;
}
