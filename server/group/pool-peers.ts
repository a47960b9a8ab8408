/**
 * A self-play pool across the processes of a group: every process with rooms of pool P has a pool
 * named P (server/self-play/pool.ts); the one holding P's trainer lease (trainer-lease.ts) trains,
 * the others publish their episodes to it, and each round it finishes is published to all, whose
 * rooms play it from their next episode. Both go through Colyseus's Redis presence (its pub/sub),
 * checked with zod on arrival; the latest rounds are also kept in a key, for a process whose first
 * room of the pool comes later. An episode published while no process holds the lease (the trainer
 * just died) reaches nobody; it stays in its own process's pool, which trains on it if it is the
 * one to take the pool over.
 */
import { matchMaker } from "@colyseus/core";
import { z } from "zod";
import { SocializedContextSchema } from "../../worlds/core/socialized-context.js";
import type { PoolOfPeers, PoolPeers } from "../self-play/pool.js";
import type { ProcessGroup } from "./process-group.js";
import { KEY_PREFIX } from "./redis.js";
import { TrainerLease } from "./trainer-lease.js";

const EpisodeMessage = z.object({
  from: z.string(),
  episode: z.object({
    roomId: z.string(),
    seed: z.number(),
    title: z.string(),
    context: SocializedContextSchema,
    turns: z.array(z.object({ agent: z.string(), timestep: z.number(), observation: z.string(), state: z.unknown(), joint: z.record(z.string(), z.unknown()), exogenous: z.array(z.unknown()) })),
    quizFile: z.string().optional(),
    // The room's world options: the trainer's thread rebuilds the world from them (round-worker.ts).
    worldOptions: z.unknown().optional(),
    quizScores: z.array(z.object({ controller: z.string(), asked: z.number(), correct: z.number() })).optional(),
  }),
});

const RoundsMessage = z.object({ from: z.string(), dirs: z.array(z.string()) });

/** The peers of `pool` in `group`; `log` says when this process starts or stops training it. */
export function poolPeers(group: ProcessGroup, pool: PoolOfPeers, log: (line: string) => void = (l) => console.log(l)): PoolPeers {
  const me = matchMaker.processId;
  const episodes = `${KEY_PREFIX}selfplay:${pool.name}:episodes`;
  const rounds = `${KEY_PREFIX}selfplay:${pool.name}:rounds`;
  const onEpisode = (raw: unknown) => {
    const m = EpisodeMessage.safeParse(raw);
    if (!m.success) return console.error(`[self-play ${pool.name}] an episode message that is not one: ${m.error.issues[0]?.message}`);
    if (m.data.from !== me) pool.received(m.data.episode);
  };
  const onRounds = (raw: unknown) => {
    const m = RoundsMessage.safeParse(raw);
    if (!m.success) return console.error(`[self-play ${pool.name}] a rounds message that is not one: ${m.error.issues[0]?.message}`);
    if (m.data.from !== me) pool.adoptRounds(m.data.dirs);
  };
  void group.presence.subscribe(rounds, onRounds);
  // A pool that starts here after rounds were trained elsewhere plays the latest one at once.
  void group.redis
    .get(rounds)
    .then((text) => {
      const m = text ? RoundsMessage.safeParse(JSON.parse(text)) : undefined;
      if (m?.success) pool.adoptRounds(m.data.dirs);
    })
    .catch(() => undefined);
  const lease = new TrainerLease(group.redis, group.fence, pool.name, me, (held) => {
    log(`[self-play ${pool.name}] ${held ? "this process trains the pool" : "this process no longer trains the pool"}`);
    if (held) void group.presence.subscribe(episodes, onEpisode);
    else void group.presence.unsubscribe(episodes, onEpisode);
    pool.trainerChanged(held);
  });
  return {
    trains: () => lease.holds,
    forward(episode) {
      void group.presence.publish(episodes, { from: me, episode });
    },
    announce(dirs) {
      // Kept and published in one fenced step: a trainer declared dead announces no round.
      const message = JSON.stringify({ from: me, dirs });
      void group.fence.run(group.redis, ["set", rounds, message], ["publish", rounds, message]).catch(() => undefined);
    },
    async close() {
      await lease.release();
      await group.presence.unsubscribe(rounds, onRounds);
      await group.presence.unsubscribe(episodes, onEpisode);
    },
  };
}
