/**
 * Which policies a server offers under /v1, by model id. `serve-policy DIR...` names its folders;
 * the main server offers every checkpoint folder under `<store>/policies/` (the id is the folder's
 * name) and those listed in $SOCIALWORLD_POLICIES (`DIR` or `ID=DIR`, separated like PATH), looked
 * up again on each request so that a policy trained while the server runs is served at once.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";

export interface ServedModel {
  /** What clients put in `model`. */
  readonly id: string;
  /** The checkpoint folder. */
  readonly dir: string;
}

const isCheckpoint = (dir: string) => existsSync(join(dir, "config.json")) && existsSync(join(dir, "tokenizer.json"));

/** `DIR` or `ID=DIR` (a command-line argument or an entry of $SOCIALWORLD_POLICIES). */
export function parseModelArg(arg: string): ServedModel {
  const eq = arg.indexOf("=");
  // A folder may contain "=" but an id may not contain "/": split only where the left side is an id.
  if (eq > 0 && /^[\w.:-]+$/.test(arg.slice(0, eq))) return { id: arg.slice(0, eq), dir: resolve(arg.slice(eq + 1)) };
  const dir = resolve(arg);
  return { id: basename(dir), dir };
}

/** A model id given to two of `models`, if any (one id cannot serve two folders). */
export function repeatedId(models: readonly ServedModel[]): string | undefined {
  const ids = new Set<string>();
  for (const m of models) {
    if (ids.has(m.id)) return m.id;
    ids.add(m.id);
  }
  return undefined;
}

/** The main server's policies: `<store>/policies/*` and the configured entries (`DIR` or `ID=DIR`; later ones win). */
export function discoverPolicies(store: string, entries: readonly string[] = []): ServedModel[] {
  const found = new Map<string, ServedModel>();
  const root = join(store, "policies");
  if (existsSync(root)) {
    for (const name of readdirSync(root).sort()) {
      const dir = join(root, name);
      if (statSync(dir).isDirectory() && isCheckpoint(dir)) found.set(name, { id: name, dir });
    }
  }
  for (const entry of entries) {
    const m = parseModelArg(entry);
    found.set(m.id, m);
  }
  return [...found.values()];
}
