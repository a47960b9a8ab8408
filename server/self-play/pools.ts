/** The server's self-play pools, by name: rooms join one when they are created and leave it when they close. */
import type { RunStore } from "../../store/run-store.js";
import type { TrainingBoard } from "../training-board.js";
import type { SelfPlayOptions } from "./options.js";
import { SelfPlayPool, type PoolOfPeers, type PoolPeers } from "./pool.js";

export class SelfPlayPools {
  private readonly pools = new Map<string, SelfPlayPool>();
  /** Pools whose last room left, until their round in progress has stopped (the server's close waits for them). */
  private readonly closing = new Set<Promise<void>>();

  constructor(
    private readonly store: RunStore,
    private readonly board: TrainingBoard,
    /** In a group of processes: a pool's counterparts in the others (server/group/pool-peers.ts). */
    private readonly peers?: (pool: PoolOfPeers) => PoolPeers,
  ) {}

  /**
   * Adds a room to pool `name` (made on first use). Rooms of one pool must play the same world
   * with the same policy; the first room's schedule is the pool's.
   */
  join(name: string, roomId: string, world: string, baseSpec: string, options: SelfPlayOptions, room: { private?: boolean } = {}): SelfPlayPool {
    let pool = this.pools.get(name);
    if (pool) {
      if (pool.world !== world) throw new Error(`self-play pool "${name}" trains a ${pool.world} policy, not ${world}`);
      if (pool.baseSpec !== baseSpec) throw new Error(`self-play pool "${name}" trains ${pool.baseSpec}, not ${baseSpec}`);
    } else {
      pool = new SelfPlayPool(name, world, baseSpec, options, this.store, this.board, this.peers);
      this.pools.set(name, pool);
    }
    pool.join(roomId, room);
    return pool;
  }

  leave(name: string, roomId: string): void {
    const pool = this.pools.get(name);
    if (pool?.leave(roomId)) {
      this.pools.delete(name);
      const closed: Promise<void> = pool.close().finally(() => this.closing.delete(closed));
      this.closing.add(closed);
    }
  }

  async closeAll(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all([...all.map((p) => p.close()), ...this.closing]);
  }
}
