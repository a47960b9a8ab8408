/**
 * A social room's main view: the cascade as a tree (each post with its comments and reposts
 * nested under what they answer, likes counted), or a feed: every item in order (the world), a
 * person's seat's feed as the room streams it, or any user's view a spectator asked for (the
 * items that user has seen or written, when and how each reached them). A seated page is sent its
 * own user's feed only; the room refuses it anyone else's view.
 */
import type { FeedItemJson, PerspectiveView, SocialRoomStateJson } from "../../server/protocol.js";
import { h } from "./dom.js";

export const WORLD_FEED = "world";
/** The views a spectator may switch between besides people's feeds. */
export type SocialMode = { kind: "tree" } | { kind: "feed"; name: string } | { kind: "user"; view: PerspectiveView | undefined; user: string };

const VERB: Record<string, string> = { post: "posted", comment: "commented", repost: "reposted", like: "liked" };

function itemLine(x: FeedItemJson, opts: { via?: boolean; likes?: number } = {}) {
  return h(
    `div.item.${x.kind}`,
    { dataset: { item: x.id } },
    h("span.badge", x.id),
    " ",
    h("strong", x.author),
    ` ${VERB[x.kind] ?? x.kind}`,
    x.kind !== "post" && x.parent ? h("span.muted", ` ${x.parent}`) : null,
    h("span.muted", ` · t${x.time} · #${x.topic}`),
    opts.via && x.via ? h(`span.badge.via-${x.via}`, x.via === "own" ? "own" : `${x.via} · seen t${x.seen}`) : null,
    opts.likes ? h("span.muted", ` · ${opts.likes} like${opts.likes === 1 ? "" : "s"}`) : null,
    x.text ? h("div.item-text", x.text) : null,
  );
}

/** Posts with their reactions nested under what they answer; likes are counted, not listed. */
function tree(items: readonly FeedItemJson[]): HTMLElement {
  const children = new Map<string, FeedItemJson[]>();
  const likes = new Map<string, number>();
  const ids = new Set(items.map((x) => x.id));
  for (const x of items) {
    if (x.kind === "like") likes.set(x.parent, (likes.get(x.parent) ?? 0) + 1);
    else if (x.parent) children.set(x.parent, [...(children.get(x.parent) ?? []), x]);
  }
  const node = (x: FeedItemJson): HTMLElement =>
    h("li", itemLine(x, { likes: likes.get(x.id) ?? 0 }), children.has(x.id) ? h("ul.replies", children.get(x.id)!.map(node)) : null);
  // Roots: posts, and reactions whose parent the bounded feed no longer holds.
  const roots = items.filter((x) => x.kind !== "like" && (!x.parent || !ids.has(x.parent)));
  if (roots.length === 0) return h("p.muted", "No post yet.");
  return h("ul.cascade", roots.map(node));
}

function feed(items: readonly FeedItemJson[], empty: string): HTMLElement {
  if (items.length === 0) return h("p.muted", empty);
  return h("ol.feed", items.map((x) => h("li", itemLine(x, { via: true }))));
}

export function socialMain(s: SocialRoomStateJson, mode: SocialMode): HTMLElement {
  const world = s.feeds[WORLD_FEED]?.items ?? [];
  if (mode.kind === "tree") return tree(world);
  if (mode.kind === "user") {
    const v = mode.view;
    if (!v) return h("p.muted", `asking for ${mode.user}'s view…`);
    if (!v.ok) return h("p.error", v.error);
    return h("div", h("p.muted", `${v.user}'s view at time ${v.time}: what they have seen or written${v.truncated ? " (the newest items)" : ""}.`), feed(v.items, `${v.user} has seen nothing yet.`));
  }
  const items = s.feeds[mode.name]?.items ?? [];
  return feed(items, mode.name === WORLD_FEED ? "No post yet." : `${mode.name} has seen nothing yet.`);
}

/**
 * A seated person's post box: the post goes out at the next timestep. Made once and kept across
 * renders (the room view redraws on every patch: a box made afresh would lose what is typed).
 */
export class PostBox {
  readonly element: HTMLElement;
  private readonly note = h("p.muted#post-result");

  constructor(send: (content: string, topic: string | undefined) => void) {
    const text = h("textarea#post-text", { rows: 3, maxLength: 2000, placeholder: "Write a post…" });
    const topic = h("input#post-topic", { placeholder: "topic (optional)", maxLength: 64 });
    this.element = h("div.card#post-box", h("h3", "Post"), text, topic, h("button#post-send", { onclick: () => send(text.value, topic.value.trim() || undefined) }, "Post"));
  }

  /** The room's answer to the last post. */
  result(ok: boolean, text: string): void {
    this.note.textContent = text;
    this.note.className = ok ? "muted" : "error";
    if (ok) (this.element.querySelector("#post-text") as HTMLTextAreaElement).value = "";
    this.element.append(this.note);
  }
}

/** The spectator's box: any user's view, by name. */
export function userBox(ask: (user: string) => void): HTMLElement {
  const input = h("input#view-user", { placeholder: "a user's name", maxLength: 64 });
  return h(
    "span.user-box",
    input,
    h("button#view-user-go", { onclick: () => input.value.trim() && ask(input.value.trim()) }, "view"),
  );
}
