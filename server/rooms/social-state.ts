/**
 * The social room's synchronized state: every room's (state.ts), plus the items of the cascade as
 * each perspective holds them (`feeds`, a `.view()` collection as `perspectives` is):
 *
 * - the "world" feed holds every item (the omniscient cascade): spectators of a public room (and
 *   holders of a private room's spectator token) have it, a seated person never does;
 * - a feed per person's seat holds the items that user has seen or written, in the order they
 *   reached them: the seat's holder has its own, spectators have them all.
 *
 * Items are appended, never changed (a reaction is an item of its own: counts are the client's
 * to tally), so each patch carries only what happened at that timestep. A spectator switching to a
 * user who is not a person's seat asks the room for that user's view (social-room.ts).
 */
import { schema, t, type SchemaType } from "@colyseus/schema";
import { RoomState } from "./state.js";

export const FeedItem = schema(
  {
    /** "p12", "c13", "r14", "l15". */
    id: t.string(),
    /** "post", "comment", "repost" or "like". */
    kind: t.string(),
    author: t.string(),
    /** What it answers, reposts or likes ("" for a post). */
    parent: t.string(),
    /** -1 for a post, 0 for a reaction to one, ... */
    depth: t.int16(),
    /** When it was written. */
    time: t.uint32(),
    /** When the feed's user first saw it (its time, in the world feed). */
    seen: t.uint32(),
    topic: t.string(),
    text: t.string(),
    /** How the feed's user got it: "feed", "notification", "context" or "own" ("" in the world feed). */
    via: t.string(),
  },
  "FeedItem",
);
export type FeedItem = SchemaType<typeof FeedItem>;

export const Feed = schema(
  {
    /** "world" or a user's name. */
    name: t.string(),
    items: t.array(FeedItem),
  },
  "Feed",
);
export type Feed = SchemaType<typeof Feed>;

export const SocialRoomState = RoomState.extend(
  {
    /** Users in the network (seats are one per user). */
    users: t.uint32(),
    feeds: t.map(Feed).view(),
  },
  "SocialRoomState",
);
export type SocialRoomState = SchemaType<typeof SocialRoomState>;

export function feedItem(f: { id: string; kind: string; author: string; parent: string; depth: number; time: number; seen: number; topic: string; text: string; via: string }): FeedItem {
  const item = new FeedItem();
  item.id = f.id;
  item.kind = f.kind;
  item.author = f.author;
  item.parent = f.parent;
  item.depth = f.depth;
  item.time = f.time;
  item.seen = f.seen;
  item.topic = f.topic;
  item.text = f.text;
  item.via = f.via;
  return item;
}
