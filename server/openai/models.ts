/**
 * Which policies a server offers under /v1, by model id. `serve-policy DIR...` names its folders;
 * the main server offers every checkpoint folder under `<store>/policies/` (the id is the folder's
 * name) and those listed in $SOCIALWORLD_POLICIES (`DIR` or `ID=DIR`, separated like PATH), looked
 * up again on each request so that a policy trained while the server runs is served at once.
 *
 * LoRA adapters (folders in PEFT's layout) are served over their base as `BASE:NAME`: an adapter
 * folder among the others is attached to the served base its adapter_config.json names
 * (base_model_name_or_path, the folder `train --lora` trained on), or to the base its id names
 * (`BASE:NAME=DIR`). Adapters come and go with their folders, without a restart: the lists are
 * read again on each request, and the base's thread loads an adapter when it is first asked for
 * and drops it when it is no longer listed.
 */
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { adapterBaseModel } from "../../models/peft-adapter.js";
import type { ServedAdapter } from "./worker-protocol.js";

export type { ServedAdapter };

export interface ServedModel {
  /** What clients put in `model`. */
  readonly id: string;
  /** The checkpoint folder. */
  readonly dir: string;
  /** LoRA adapters of it, served as `id:name`. */
  readonly adapters?: readonly ServedAdapter[];
}

const isCheckpoint = (dir: string) => existsSync(join(dir, "config.json")) && existsSync(join(dir, "tokenizer.json"));
const isAdapter = (dir: string) => existsSync(join(dir, "adapter_config.json"));

/** `DIR` or `ID=DIR` (a command-line argument or an entry of $SOCIALWORLD_POLICIES). */
export function parseModelArg(arg: string): ServedModel {
  const eq = arg.indexOf("=");
  // A folder may contain "=" but an id may not contain "/": split only where the left side is an id.
  if (eq > 0 && /^[\w.:-]+$/.test(arg.slice(0, eq))) return { id: arg.slice(0, eq), dir: resolve(arg.slice(eq + 1)) };
  const dir = resolve(arg);
  return { id: basename(dir), dir };
}

/** A model id given to two of `models` (or to an adapter and a model), if any (one id cannot serve two folders). */
export function repeatedId(models: readonly ServedModel[]): string | undefined {
  const ids = new Set<string>();
  for (const id of models.flatMap((m) => [m.id, ...(m.adapters ?? []).map((a) => `${m.id}:${a.name}`)])) {
    if (ids.has(id)) return id;
    ids.add(id);
  }
  return undefined;
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return resolve(a) === resolve(b);
  }
}

/**
 * Splits served folders into bases and adapters and attaches each adapter to its base: the one
 * its id names (`BASE:NAME`), else the served base whose folder its config names. Adapters with
 * no served base are returned apart (the caller says so).
 */
export function attachAdapters(entries: readonly ServedModel[]): { models: ServedModel[]; unattached: ServedModel[] } {
  const bases = entries.filter((m) => !isAdapter(m.dir));
  const adapters = new Map<string, ServedAdapter[]>(bases.map((b) => [b.id, [...(b.adapters ?? [])]]));
  const unattached: ServedModel[] = [];
  for (const a of entries.filter((m) => isAdapter(m.dir))) {
    const colon = a.id.lastIndexOf(":");
    const named = colon > 0 ? bases.find((b) => b.id === a.id.slice(0, colon)) : undefined;
    const base = adapterBaseModel(a.dir);
    const found = named ?? (base !== null ? bases.find((b) => samePath(b.dir, base)) : undefined);
    if (!found) {
      unattached.push(a);
      continue;
    }
    adapters.get(found.id)!.push({ name: named ? a.id.slice(colon + 1) : a.id, dir: a.dir });
  }
  const models = bases.map((b) => {
    const list = adapters.get(b.id)!;
    return list.length > 0 ? { ...b, adapters: list } : { id: b.id, dir: b.dir };
  });
  return { models, unattached };
}

/** The adapter folders directly under `root` (each served by its folder's name). */
export function adapterFolders(root: string): ServedModel[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .sort()
    .map((name) => ({ id: name, dir: join(root, name) }))
    .filter((m) => statSync(m.dir).isDirectory() && isAdapter(m.dir));
}

/**
 * The main server's policies: `<store>/policies/*` (checkpoints, and adapters of them) and the
 * configured entries (`DIR` or `ID=DIR`; later ones win).
 */
export function discoverPolicies(store: string, entries: readonly string[] = []): ServedModel[] {
  const found = new Map<string, ServedModel>();
  const root = join(store, "policies");
  if (existsSync(root)) {
    for (const name of readdirSync(root).sort()) {
      const dir = join(root, name);
      if (statSync(dir).isDirectory() && (isCheckpoint(dir) || isAdapter(dir))) found.set(name, { id: name, dir });
    }
  }
  for (const entry of entries) {
    const m = parseModelArg(entry);
    found.set(m.id, m);
  }
  return attachAdapters([...found.values()]).models;
}
