/**
 * /api/runs: the store's runs, a run's episodes page by page, one episode as socialized-context
 * JSON, and one episode's information-leak audit (what the web client's replay marks). A run id is looked up in the store's registry; only then is its folder (from the store,
 * not from the request) read. Runs of private rooms are shown only with the admin token, and a
 * human baseline's episodes only once it has ended.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Router, type Request } from "express";
import { z } from "zod";
import { readLogPage } from "../../store/log-index.js";
import type { RunRecord } from "../../store/run-store.js";
import { DataError } from "../../worlds/core/errors.js";
import { SocializedContextSchema, serializeSocializedContext } from "../../worlds/core/socialized-context.js";
import type { ServerContext } from "../context.js";
import { PathShower, publicRecords, publicRun } from "../security/public-run.js";
import { isAdmin } from "./admin.js";
import { auditRecord } from "../run-audit.js";
import { isQuizOpening, isWithheld, openQuizEpisodes, withheldRecord } from "../security/open-quizzes.js";
import { liveRoomOfRun } from "../group/group-rooms.js";
import { HttpError, parseOr400 } from "./errors.js";

const RunIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,120}$/, "not a run id");
const Page = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
const EpisodeQuery = z.object({ format: z.enum(["context", "record"]).default("context") });

type LogRecord = { context_id?: string; socialized_context?: unknown };

export function runsRouter(ctx: ServerContext, adminToken: string): Router {
  const r = Router();
  // No absolute path of the server's in any answer; a live run's seed and data file withheld.
  const paths = new PathShower(ctx.store.root, ctx.dataRoots);
  const visible = (req: Request, run: RunRecord) => run.params.visibility !== "private" || isAdmin(req, adminToken);
  const runOf = (req: Request): RunRecord => {
    const id = parseOr400(RunIdSchema, req.params.runId, "path parameter runId");
    const run = ctx.store.get(id);
    if (!run || !visible(req, run)) throw new HttpError(404, `no run "${id}"`);
    return run;
  };

  r.get("/", (req, res) => {
    const { offset, limit } = parseOr400(Page, req.query, "query");
    const runs = ctx.store.list().filter((run) => visible(req, run));
    res.json({ total: runs.length, offset, limit, runs: runs.slice(offset, offset + limit).map((run) => publicRun(run, paths, isAdmin(req, adminToken))) });
  });

  r.get("/:runId", (req, res) => {
    const run = runOf(req);
    const reportPath = join(ctx.store.dirOf(run), "report.json");
    const report = existsSync(reportPath) ? (JSON.parse(readFileSync(reportPath, "utf8")) as unknown) : null;
    res.json({ run: publicRun(run, paths, isAdmin(req, adminToken)), report: paths.deep(report) });
  });

  /**
   * A human baseline's log holds the official labels and the stories' world-model episodes (which
   * answer the questions still to come): nobody but an admin reads it before the run ends.
   */
  const episodesOf = (req: Request): RunRecord => {
    const run = runOf(req);
    if (run.status === "running" && String(run.params.agent ?? "").startsWith("human") && !isAdmin(req, adminToken)) {
      throw new HttpError(403, `run ${run.id} is a human baseline in progress: its episodes are readable when it ends`);
    }
    return run;
  };

  /** A damaged log is the server's fault, not the client's: 500, saying where, without the server's paths. */
  const pageOf = (run: RunRecord, offset: number, limit: number) => {
    try {
      return readLogPage<LogRecord>(ctx.store.episodesPath(run), offset, limit);
    } catch (err) {
      if (!(err instanceof DataError)) throw err;
      console.error(`[api] ${err.message}`);
      throw new HttpError(500, `run ${run.id}: its episode log is damaged at line ${err.line ?? "?"} (not valid JSON)`);
    }
  };

  /**
   * The episodes of a room's run whose quiz is open (server/security/open-quizzes.ts): their
   * records hold the quiz's answers, and nobody reads them before it closes, the admin included
   * (whose token may be in the hands of a person being quizzed, or of a client playing a seat).
   */
  const openQuizzes = async (run: RunRecord): Promise<ReadonlySet<number>> => {
    if (run.kind !== "room" || run.params.type !== "simulation") return new Set();
    // The run's room may be played by another process of the group.
    const live = await liveRoomOfRun(ctx, run.id);
    return openQuizEpisodes(ctx.store.episodesPath(run), live ? { liveEpisode: live.episode, liveServer: live.server } : {});
  };
  const refuseWithheld = async (run: RunRecord, record: unknown, index: number): Promise<void> => {
    if (isWithheld(record, await openQuizzes(run))) throw new HttpError(403, `episode ${index} of run ${run.id} is being quizzed: it is readable when its quiz closes`);
    if (isQuizOpening(record)) throw new HttpError(404, `record ${index} of run ${run.id} opens a quiz: it is not an episode`);
  };

  r.get("/:runId/episodes", async (req, res) => {
    const run = episodesOf(req);
    const { offset, limit } = parseOr400(Page, req.query, "query");
    // Benchmark logs write each story's context once; the page fills it in where a record names it.
    const page = pageOf(run, offset, limit);
    const open = await openQuizzes(run);
    // The records that open quizzes are bookkeeping, not episodes: left out. `indexes` says where
    // in the log each record shown is (`offset` and `total` count the log's records).
    const records: LogRecord[] = [];
    const indexes: number[] = [];
    page.records.forEach((r, i) => {
      if (isQuizOpening(r)) return;
      records.push(isWithheld(r, open) ? (withheldRecord(r as Record<string, unknown>) as LogRecord) : r);
      indexes.push(offset + i);
    });
    res.json({ total: page.total, offset, limit, torn: page.torn, episodes: publicRecords(run, records, paths, isAdmin(req, adminToken)), indexes });
  });

  /** The leak audit of one episode (server/run-audit.ts): as readable as the episode itself. */
  r.get("/:runId/episodes/:index/audit", async (req, res) => {
    const run = episodesOf(req);
    const index = parseOr400(z.coerce.number().int().min(0), req.params.index, "path parameter index");
    const world = parseOr400(z.object({ world: z.string().regex(/^[a-z0-9_-]{1,40}$/).optional() }), req.query, "query").world;
    const page = pageOf(run, index, 1);
    if (index >= page.total) throw new HttpError(404, `run ${run.id} has ${page.total} episodes; there is no episode ${index}`);
    await refuseWithheld(run, page.records[0], index);
    res.json(await auditRecord(page.records[0] as Parameters<typeof auditRecord>[0], index, world ? { world } : {}));
  });

  r.get("/:runId/episodes/:index", async (req, res) => {
    const run = episodesOf(req);
    const index = parseOr400(z.coerce.number().int().min(0), req.params.index, "path parameter index");
    const { format } = parseOr400(EpisodeQuery, req.query, "query");
    const page = pageOf(run, index, 1);
    if (index >= page.total) throw new HttpError(404, `run ${run.id} has ${page.total} episodes; there is no episode ${index}`);
    const [record] = page.records;
    await refuseWithheld(run, record, index);
    if (format === "record") {
      res.json(publicRecords(run, [record], paths, isAdmin(req, adminToken))[0]);
      return;
    }
    const context = SocializedContextSchema.safeParse(record?.socialized_context);
    if (!context.success) throw new HttpError(404, `episode ${index} of run ${run.id} has no socialized context`);
    // Byte for byte as the social-world-model project writes it.
    res.type("application/json").send(serializeSocializedContext(context.data));
  });

  return r;
}
