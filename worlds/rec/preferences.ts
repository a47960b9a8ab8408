/**
 * The generator's latent truth (preferences.json beside the generated ratings.dat): why each user
 * chose what they chose. A user's next item is drawn from the items they have not seen with
 * probability proportional to exp(utility), where
 *
 *   utility(item) = beta * <user + gamma * last, item> + bias(item)
 *
 * `user` and `item` are unit vectors (taste and content, near the vectors of their genres),
 * `last` the vector of the item chosen just before (taste drifts toward what was just watched:
 * the sequential signal) and `bias` the item's popularity. Knowing these, the oracle ranks the
 * unseen items by their true probability of being next.
 */
import { z } from "zod";
import { readFileSync } from "node:fs";
import { DataError } from "../core/errors.js";

const Vector = z.array(z.number().finite()).min(1);

export const PreferencesSchema = z
  .object({
    dim: z.number().int().min(1),
    beta: z.number().finite(),
    gamma: z.number().finite(),
    items: z.array(z.object({ id: z.number().int(), vector: Vector, bias: z.number().finite() }).strict()).min(1),
    users: z.array(z.object({ id: z.number().int(), vector: Vector }).strict()).min(1),
  })
  .strict()
  .superRefine((p, ctx) => {
    const check = (vs: readonly { vector: readonly number[] }[], key: "items" | "users") =>
      vs.forEach((v, i) => {
        if (v.vector.length !== p.dim) ctx.addIssue({ code: "custom", path: [key, i, "vector"], message: `has ${v.vector.length} numbers, dim is ${p.dim}` });
      });
    check(p.items, "items");
    check(p.users, "users");
  });

export type Preferences = z.infer<typeof PreferencesSchema>;

export const PREFERENCES_FILE = "preferences.json";

export function parsePreferences(text: string, file: string): Preferences {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new DataError(file, {}, `is not JSON (${(err as Error).message})`);
  }
  const r = PreferencesSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new DataError(file, { field: issue.path.join(".") || "(top level)" }, issue.message);
  }
  return r.data;
}

export function readPreferences(file: string): Preferences {
  return parsePreferences(readFileSync(file, "utf8"), file);
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The utility of `item` for a user of taste `user` whose last item was `last` (none: the first choice). */
export function utility(p: Pick<Preferences, "beta" | "gamma">, user: readonly number[], last: readonly number[] | undefined, item: { vector: readonly number[]; bias: number }): number {
  let s = 0;
  for (let d = 0; d < user.length; d++) s += (user[d]! + (last ? p.gamma * last[d]! : 0)) * item.vector[d]!;
  return p.beta * s + item.bias;
}
