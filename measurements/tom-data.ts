/**
 * Where the shared benchmark data lives (never copied into the repo): $SOCIALWORLD_TOM_DATA, or a
 * `shared/data/tom` folder beside the checkout or one level further up. Tests and the scripts
 * under measurements/ find the official files here.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../worlds/question/prompts.js";

export function findTomData(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = env.SOCIALWORLD_TOM_DATA;
  if (given) return existsSync(given) ? given : undefined;
  for (const up of ["..", "../.."]) {
    const dir = join(packageRoot(), up, "shared", "data", "tom");
    if (existsSync(dir)) return dir;
  }
  return undefined;
}

/** A path under the data folder (the first candidate when none is found, for the error message). */
export function tomDataPath(...parts: string[]): string {
  return join(findTomData() ?? join(packageRoot(), "..", "shared", "data", "tom"), ...parts);
}
