/** `socialworld generate <world> --n N --seed S --out FILE` */
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { loadGenerator, WORLD_NAMES, worldsWith } from "../../worlds/registry.js";
import { intArg, parseCommand, UsageError } from "../args.js";
import { prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";

export async function generateHelp(): Promise<string> {
  const worlds = await worldsWith("generator");
  return `socialworld generate <${worlds.map((w) => w.name).join("|")}> --n N --seed S --out FILE

Writes N new benchmark questions in the benchmark's own file format, labelled by the world model.
${worlds.map((w) => `  ${w.name.padEnd(8)} ${w.generator!.describe}`).join("\n")}

Options:
  --n N        number of questions, or of what the world's line above counts (default 600)
  --seed S     random seed (default 0); the same seed writes the same file
  --out FILE   where to write (the folder to write into, for a world whose line above says so)
  --quiet      no progress bar
`;
}

const Args = z.object({
  _: z.tuple([z.enum(WORLD_NAMES as [string, ...string[]], { error: `expected one of ${WORLD_NAMES.join(", ")}` })], {
    error: `expected what to generate: ${WORLD_NAMES.join(", ")}`,
  }),
  n: intArg(1, 10_000_000).default(600),
  seed: intArg(0, 2 ** 32 - 1).default(0),
  out: z.string({ error: "is required" }).min(1),
  quiet: z.boolean().default(false),
});

export async function generateCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  const kind = args._[0];
  const generator = await loadGenerator(kind).catch((err: Error) => {
    throw new UsageError(err.message);
  });
  if (generator.least && args.n < generator.least.n) throw new UsageError(`--n: ${generator.least.why}`);
  if (generator.output === "folder") prepareFolder(args.out);
  else prepareOutput("--out", args.out);
  const progress = new Progress(`generate ${kind}`, args.n, args.quiet ? null : process.stderr);
  const set = await generator.generate(args.n, args.seed, args.out, (done) => progress.update(done));
  for (const file of set.files) {
    if (generator.output === "folder") mkdirSync(dirname(file.path), { recursive: true });
    writeFileAtomic(file.path, file.text);
  }
  progress.finish();
  const written = [set.data, ...set.files.map((f) => f.path).filter((p) => p !== set.data)];
  process.stdout.write(`wrote ${args.n} ${kind} ${generator.unit ?? "questions"} (seed ${args.seed}): ${written.join(", ")}\n`);
  return 0;
}

/** An output folder: made if missing; an existing file there is a usage error. */
function prepareFolder(path: string): void {
  if (statSync(path, { throwIfNoEntry: false })?.isFile()) throw new UsageError(`--out: ${path} is a file; give a folder (the files are written into it)`);
  try {
    mkdirSync(path, { recursive: true });
  } catch (err) {
    throw new UsageError(`--out: cannot make the folder ${path} (${(err as Error).message})`);
  }
}
