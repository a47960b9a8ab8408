/**
 * What a user can do, as zod schemas (decoding is constrained to their JSON schemas):
 *
 *   {"action": "comment", "target": "p12", "content": "I disagree. ..."}   content required
 *   {"action": "repost",  "target": "p12", "content": "Worth reading."}    content optional
 *   {"action": "like",    "target": "c13"}
 *   {"action": "ignore",  "target": "c13"}       passes on one item
 *   {"action": "ignore"}                         closes the app: the no-op, valid at any time
 *   {"action": "post", "content": "...", "topic": "nuclear-power"}        a new root post (rooms)
 *
 * Objects are strict: a field the action does not take (content on a like) is an error, so the
 * strict format reward (-1) and a room's validation reject exactly what is not the schema. The
 * benchmark asks about one item at a time: its schema is the four reactions with `target` fixed.
 */
import { z } from "zod";
import { TOPIC_KEYS } from "./vocabulary.js";

export type SocialAction =
  | { readonly action: "comment"; readonly target: string; readonly content: string }
  | { readonly action: "repost"; readonly target: string; readonly content?: string }
  | { readonly action: "like"; readonly target: string }
  | { readonly action: "ignore"; readonly target?: string }
  | { readonly action: "post"; readonly content: string; readonly topic?: string };

export type ReactionAction = Exclude<SocialAction, { action: "post" }>;
export const REACTION_TYPES = ["comment", "repost", "like", "ignore"] as const;
export type ReactionType = (typeof REACTION_TYPES)[number];

export const MAX_CONTENT = 2000;
const Written = z.string().max(MAX_CONTENT).regex(/\S/, { error: "is empty" });
const Optional = z.string().max(MAX_CONTENT);

function reactionVariants<T extends z.ZodType<string>>(target: T, ignoreTarget: z.ZodType<string | undefined>) {
  return [
    z.strictObject({ action: z.literal("comment"), target, content: Written.describe("What you write.") }).describe("Comment on the item."),
    z.strictObject({ action: z.literal("repost"), target, content: Optional.optional().describe("What you add, if anything.") }).describe("Repost the item to your followers."),
    z.strictObject({ action: z.literal("like"), target }).describe("Like the item."),
    z.strictObject({ action: z.literal("ignore"), target: ignoreTarget }).describe("Pass on the item; without a target, close the app."),
  ] as const;
}

const PostVariant = z
  .strictObject({
    action: z.literal("post"),
    content: Written.describe("The post."),
    topic: z.enum(TOPIC_KEYS as [string, ...string[]]).optional().describe("What it is about (default: what you care about most)."),
  })
  .describe("Write a new post.");

const AnyTarget = z.string().min(1).max(40).describe("The id of an item (p12, c13, r14).");

/** Any well-formed action (the shape, whatever the state). */
export const SocialActionSchema = z.discriminatedUnion("action", [...reactionVariants(AnyTarget, AnyTarget.optional()), PostVariant]) as z.ZodType<SocialAction>;

/** The actions open to a user whose screen holds `targets` (ids). */
export function actionSchemaFor(targets: readonly string[]): z.ZodType<SocialAction> {
  if (targets.length === 0) {
    const Close = z.strictObject({ action: z.literal("ignore") }).describe("Do nothing (nothing is on your screen).");
    return z.discriminatedUnion("action", [Close, PostVariant]) as z.ZodType<SocialAction>;
  }
  const target = z.enum(targets as [string, ...string[]], { error: `not an item on your screen (${targets.join(", ")})` });
  return z.discriminatedUnion("action", [...reactionVariants(target, target.optional()), PostVariant]) as z.ZodType<SocialAction>;
}

// Building a schema takes about a millisecond; tasks share targets ("p0" in every generated tree).
const reactionSchemas = new Map<string, z.ZodType<ReactionAction>>();

/** The benchmark's question: what does the user do with item `target`? One of the four reactions, on that item. */
export function reactionSchemaFor(target: string): z.ZodType<ReactionAction> {
  let schema = reactionSchemas.get(target);
  if (!schema) {
    const t = z.literal(target, { error: `the target must be "${target}"` });
    schema = z.discriminatedUnion("action", [...reactionVariants(t, t)]) as z.ZodType<ReactionAction>;
    if (reactionSchemas.size >= 10_000) reactionSchemas.clear();
    reactionSchemas.set(target, schema);
  }
  return schema;
}

/** The text an action writes ("" for likes, ignores and reposts without one). */
export function contentOf(a: SocialAction): string {
  return a.action === "comment" || a.action === "post" ? a.content : a.action === "repost" ? (a.content ?? "") : "";
}

/** An action as the socialized context and the logs write it: `comments on p12: "..."`, `closes the app`. */
export function describeAction(a: SocialAction): string {
  switch (a.action) {
    case "comment":
      return `comments on ${a.target}: ${JSON.stringify(a.content)}`;
    case "repost":
      return a.content ? `reposts ${a.target}: ${JSON.stringify(a.content)}` : `reposts ${a.target}`;
    case "like":
      return `likes ${a.target}`;
    case "ignore":
      return a.target === undefined ? "closes the app" : `ignores ${a.target}`;
    case "post":
      return `posts: ${JSON.stringify(a.content)}`;
  }
}
