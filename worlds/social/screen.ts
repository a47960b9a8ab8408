/**
 * What a user sees: the screen of the current session (notifications, then feed items, each with
 * what it answers or reposts), as structured entries and as text. Built only from the items on
 * that user's screen: nothing here reads another user's screen, intents or the latent profiles.
 */
import { itemId, KIND_NAMES } from "./items.js";
import { VIA_NAMES, type SocialSim } from "./sim.js";
import { TOPICS } from "./vocabulary.js";

export interface ScreenItem {
  readonly id: string;
  readonly kind: (typeof KIND_NAMES)[number];
  readonly author: string;
  readonly text: string;
  readonly topic: string;
  readonly time: number;
  /** -1 for a root post. */
  readonly depth: number;
  readonly parent: string | null;
  readonly comments: number;
  readonly reposts: number;
  readonly likes: number;
  /** The viewer's own reaction to it, if any. */
  readonly reacted: (typeof KIND_NAMES)[number] | null;
}

export interface ScreenEntry {
  readonly via: (typeof VIA_NAMES)[number];
  readonly item: ScreenItem;
  /** What the item answers or reposts, nearest first, up to the root post. */
  readonly context: readonly ScreenItem[];
}

export interface Screen {
  readonly time: number;
  /** False when the user is not in the app (nothing is shown). */
  readonly open: boolean;
  readonly entries: readonly ScreenEntry[];
}

export function screenItem(sim: SocialSim, viewer: number, i: number): ScreenItem {
  const it = sim.items;
  const parent = it.parent[i]!;
  const reaction = sim.reactionOf(viewer, i);
  return {
    id: it.id(i),
    kind: KIND_NAMES[it.kind[i]!]!,
    author: sim.nameOf(it.author[i]!),
    text: sim.textOf(i),
    topic: TOPICS[it.topic[i]!]!.key,
    time: it.time[i]!,
    depth: it.depth[i]!,
    parent: parent >= 0 ? itemId(it.kind[parent]!, parent) : null,
    comments: it.comments[i]!,
    reposts: it.reposts[i]!,
    likes: it.likes[i]!,
    reacted: reaction >= 0 ? KIND_NAMES[it.kind[reaction]!]! : null,
  };
}

export function screenOf(sim: SocialSim, user: number): Screen {
  const open = sim.session[user] === 1;
  const entries: ScreenEntry[] = [];
  if (open) {
    const cap = sim.displayCapacity;
    for (let j = 0; j < sim.displayLen[user]!; j++) {
      const x = sim.display[user * cap + j]!;
      const context: ScreenItem[] = [];
      for (let y = sim.items.parent[x]!; y >= 0; y = sim.items.parent[y]!) context.push(screenItem(sim, user, y));
      entries.push({ via: VIA_NAMES[sim.displayVia[user * cap + j]!]!, item: screenItem(sim, user, x), context });
    }
  }
  return { time: sim.time, open, entries };
}

/** Every item id on a screen (entries and their context), in order, once each. */
export function screenTargets(screen: Screen): string[] {
  const ids = new Set<string>();
  for (const e of screen.entries) {
    ids.add(e.item.id);
    for (const c of e.context) ids.add(c.id);
  }
  return [...ids];
}

function quote(text: string): string {
  return text === "" ? "(no text)" : JSON.stringify(text);
}

function counts(x: ScreenItem): string {
  const parts = [`${x.comments} comments`, `${x.reposts} reposts`, `${x.likes} likes`];
  return parts.join(", ");
}

/** One item as a line: "[c13] Wei Wang commented: "..." (2 comments, 0 reposts, 1 like)". */
export function itemLine(x: ScreenItem, now: number): string {
  const verb = x.kind === "post" ? "posted" : x.kind === "comment" ? "commented" : x.kind === "repost" ? "reposted" : "liked";
  const ago = now - x.time;
  const when = ago <= 0 ? "just now" : `${ago} step${ago === 1 ? "" : "s"} ago`;
  const mine = x.reacted ? ` [you: ${x.reacted}]` : "";
  const body = x.kind === "like" ? "" : ` ${quote(x.text)}`;
  return `[${x.id}] ${x.author} ${verb} (${when}, #${TOPICS.find((t) => t.key === x.topic)!.hashtag}):${body} (${counts(x)})${mine}`;
}

export function renderScreen(screen: Screen, viewerName: string): string {
  if (!screen.open || screen.entries.length === 0) return "";
  const lines: string[] = [`${viewerName}, you open the app (time ${screen.time}).`];
  for (const e of screen.entries) {
    lines.push(`${e.via === "notification" ? "Notification" : "Feed"}: ${itemLine(e.item, screen.time)}`);
    for (const c of e.context) lines.push(`    ${c.kind === "post" ? "on" : "answering"} ${itemLine(c, screen.time)}`);
  }
  return lines.join("\n");
}
