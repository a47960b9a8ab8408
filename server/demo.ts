/**
 * The demo rooms `npm start` opens: generated stories of every registered world played live by
 * their scripts (every seat open to a visitor), an agent running a generated benchmark set, and a
 * set a visitor can answer (a human baseline), and a social network whose posts spread live (eight
 * of its users' seats open to visitors).
 */
import { matchMaker } from "@colyseus/core";
import type { BenchmarkOptionsInput, SimulationOptionsInput, SocialOptionsInput } from "./rooms/options.js";
import { worldsWith } from "../worlds/registry.js";

export async function demoRooms(): Promise<{ type: "simulation" | "benchmark" | "social"; options: SimulationOptionsInput | BenchmarkOptionsInput | SocialOptionsInput }[]> {
  const rooms: { type: "simulation" | "benchmark" | "social"; options: SimulationOptionsInput | BenchmarkOptionsInput | SocialOptionsInput }[] = [];
  for (const w of await worldsWith("scenario")) {
    // Seeds are drawn at random (options.ts): the source must not tell a visitor the stories.
    for (const copy of [1, 2]) {
      rooms.push({
        type: "simulation",
        options: {
          world: w.name,
          loop: true,
          tickMs: 1500,
          pauseMs: 4000,
          humanSeats: "all",
          turnDeadlineMs: 30_000,
          title: `${w.title} ${w.scenario!.episodes}, live (${copy})`,
        },
      });
    }
  }
  rooms.push({
    type: "social",
    options: { users: 300, posts: 4, every: 8, loop: true, tickMs: 1000, pauseMs: 5000, humanSeats: [0, 1, 2, 3, 4, 5, 6, 7], title: "Social media: 300 users, live" },
  });
  rooms.push({
    type: "benchmark",
    options: { benchmark: "tomi", generate: { n: 120 }, agent: "simulation", tickMs: 1200, title: "ToMi generated set · simulation agent", lingerSeconds: 86_400 },
  });
  rooms.push({
    type: "benchmark",
    options: { benchmark: "tomi", generate: { n: 12 }, agent: "human", title: "ToMi · answer it yourself (human baseline)", lingerSeconds: 86_400 },
  });
  return rooms;
}

export async function startDemoRooms(): Promise<string[]> {
  const ids: string[] = [];
  for (const { type, options } of await demoRooms()) {
    const room = await matchMaker.createRoom(type, options);
    ids.push(room.roomId);
  }
  return ids;
}
