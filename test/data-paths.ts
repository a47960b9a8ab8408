/**
 * Where the shared benchmark data lives (never copied into the repo): $SOCIALWORLD_TOM_DATA, or a
 * `shared/data/tom` folder beside the checkout or one level further up.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function find(): string | undefined {
  const env = process.env.SOCIALWORLD_TOM_DATA;
  if (env) return existsSync(env) ? env : undefined;
  for (const up of ["..", "../.."]) {
    const dir = join(repo, up, "shared", "data", "tom");
    if (existsSync(dir)) return dir;
  }
  return undefined;
}

export const TOM_DATA = find();

export function tomData(...parts: string[]): string {
  if (!TOM_DATA) throw new Error("benchmark data not found: set SOCIALWORLD_TOM_DATA or put shared/data/tom beside the checkout");
  return join(TOM_DATA, ...parts);
}

if (!TOM_DATA) console.warn("[socialworld tests] shared/data/tom not found: tests on the official data files are skipped");
