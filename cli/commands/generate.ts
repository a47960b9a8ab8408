/** `socialworld generate <tomi|hitom|fantom> --n N --seed S --out FILE` */
import { z } from "zod";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { intArg, parseCommand, UsageError } from "../args.js";
import { prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";

export interface Generator {
  readonly describe: string;
  /** The fewest questions it can write, and why (checked by `generate --n` and a room's `generate.n`). */
  readonly least?: { readonly n: number; readonly why: string };
  run(n: number, seed: number, out: string, progress: Progress): Promise<string[]>;
}

export const GENERATORS: Record<string, Generator> = {
  tomi: {
    describe: "ToMi stories: OUT.txt (bAbI) and OUT.trace, six questions per story",
    async run(n, seed, out, progress) {
      const base = out.replace(/\.txt$/, "");
      const files = await generateTomi(n, seed, (done) => progress.update(done));
      // The trace first: a .txt is never there without its whole .trace (the server reuses a set it finds).
      writeFileAtomic(`${base}.trace`, files.trace);
      writeFileAtomic(`${base}.txt`, files.txt);
      return [`${base}.txt`, `${base}.trace`];
    },
  },
  hitom: {
    describe: "Hi-ToM questions in the upstream Hi-ToM_data.json layout (CoTP), five per story (orders 0-4)",
    async run(n, seed, out, progress) {
      const gen = await generateHitom(n, seed, (done) => progress.update(Math.min(done, n)));
      writeFileAtomic(out, gen.json);
      return [out];
    },
  },
  fantom: {
    describe: "FANToM question sets in the official fantom_v1.json layout; N counts questions as the official evaluator does",
    least: { n: 3, why: "FANToM needs at least 3 questions (a set's fact question and its two list questions)" },
    async run(n, seed, out, progress) {
      const gen = generateFantom(n, seed, (done) => progress.update(Math.min(done, n)));
      writeFileAtomic(out, gen.json);
      return [out];
    },
  },
};

export function generateHelp(): string {
  return `socialworld generate <${Object.keys(GENERATORS).join("|")}> --n N --seed S --out FILE

Writes N new benchmark questions in the benchmark's own file format, labelled by the world model.
${Object.entries(GENERATORS)
  .map(([k, g]) => `  ${k.padEnd(8)} ${g.describe}`)
  .join("\n")}

Options:
  --n N        number of questions (default 600)
  --seed S     random seed (default 0); the same seed writes the same file
  --out FILE   where to write
  --quiet      no progress bar
`;
}

const Args = z.object({
  _: z.tuple([z.enum(Object.keys(GENERATORS) as [string, ...string[]], { error: `expected one of ${Object.keys(GENERATORS).join(", ")}` })], {
    error: `expected what to generate: ${Object.keys(GENERATORS).join(", ")}`,
  }),
  n: intArg(1, 10_000_000).default(600),
  seed: intArg(0, 2 ** 32 - 1).default(0),
  out: z.string({ error: "is required" }).min(1),
  quiet: z.boolean().default(false),
});

export async function generateCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, { n: { type: "string" }, seed: { type: "string" }, out: { type: "string" }, quiet: { type: "boolean" } }, Args);
  const kind = args._[0];
  const least = GENERATORS[kind]!.least;
  if (least && args.n < least.n) throw new UsageError(`--n: ${least.why}`);
  prepareOutput("--out", args.out);
  const progress = new Progress(`generate ${kind}`, args.n, args.quiet ? null : process.stderr);
  const files = await GENERATORS[kind]!.run(args.n, args.seed, args.out, progress);
  progress.finish();
  process.stdout.write(`wrote ${args.n} ${kind} questions (seed ${args.seed}): ${files.join(", ")}\n`);
  return 0;
}
