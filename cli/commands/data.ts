/**
 * `socialworld data get <tomi|hitom|fantom|all> [--dir DIR] [--mirror URL] [--quiet]` ·
 * `socialworld data list [--dir DIR]`
 */
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, normalize, resolve, sep } from "node:path";
import { z } from "zod";
import { defaultBenchmarkDir, OFFICIAL_DATA, OFFICIAL_NAMES, type OfficialData, type PublishedFile } from "../../benchmarks/official-data.js";
import { ArchiveError, type ArchiveEntry } from "../../store/archive-entry.js";
import { download, DownloadError } from "../../store/download.js";
import { readTarGz } from "../../store/tar-archive.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { readZip } from "../../store/zip-archive.js";
import { parseCommand, UsageError } from "../args.js";
import { fmtBytes, Progress } from "../progress.js";
import { onStopSignal } from "../stop-signals.js";

export const DATA_HELP = `socialworld data get <${OFFICIAL_NAMES.join("|")}|all> [--dir DIR] [--mirror URL] [--quiet]
socialworld data list [--dir DIR]

Downloads the benchmarks' official files from their public homes, checks each against the SHA-256
of the file as published, unpacks archives as they are (nothing is converted) and says each
license. A download cut off is taken up where it stopped when the command runs again; files
already there with the right checksum are not fetched again.

  data get NAME        ${OFFICIAL_DATA.map((d) => `${d.name}: ${d.home}`).join("\n                       ")}
  data list            what each benchmark's folder holds, its source and license

Options:
  --dir DIR            where the files go (default: data/benchmarks/ of the checkout, which
                       \`socialworld bench NAME\` reads when no --data is given)
  --mirror URL         fetch each file from URL/NAME/FILE instead of its home (an offline copy or a
                       local mirror; the checksums are checked all the same)
  --quiet              no progress bars
`;

const NAMES = ["all", ...OFFICIAL_NAMES] as const;

const Args = z.object({
  _: z.union([z.tuple([z.literal("get"), z.string()]), z.tuple([z.literal("list")])], {
    error: `expected: get <${OFFICIAL_NAMES.join("|")}|all> | list`,
  }),
  dir: z.string().min(1).optional(),
  mirror: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }).optional(),
  quiet: z.boolean().default(false),
});

export async function dataCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  const dir = resolve(args.dir ?? defaultBenchmarkDir());
  if (args._[0] === "list") return list(dir);
  if (!(NAMES as readonly string[]).includes(args._[1])) throw new UsageError(`argument: expected one of ${NAMES.join(", ")} (got "${args._[1]}")`);
  const which = args._[1] === "all" ? OFFICIAL_DATA : OFFICIAL_DATA.filter((d) => d.name === args._[1]);
  const controller = new AbortController();
  const signals = onStopSignal(() => controller.abort());
  let failed = 0;
  try {
    for (const data of which) {
      try {
        await getOfficialData(data, dir, { mirror: args.mirror, quiet: args.quiet, signal: controller.signal });
      } catch (err) {
        if (controller.signal.aborted) {
          process.stderr.write(`\ninterrupted: what was downloaded is kept; run the command again to go on from there\n`);
          return signals.exitCode;
        }
        if (!(err instanceof DownloadError || err instanceof ArchiveError || err instanceof FormatError)) throw err;
        process.stderr.write(`socialworld data: ${data.name}: ${err.message}\n`);
        failed++;
      }
    }
  } finally {
    signals.dispose();
  }
  return failed > 0 ? 1 : 0;
}

/** What was downloaded is not what `bench` can read (a changed upstream format). */
class FormatError extends Error {}

export interface GetOptions {
  readonly mirror?: string | undefined;
  readonly quiet?: boolean;
  readonly signal?: AbortSignal;
}

/** Downloads, checks and unpacks one benchmark's files into `root/<name>/`, saying what it does on stdout. */
export async function getOfficialData(data: OfficialData, root: string, o: GetOptions = {}): Promise<void> {
  const folder = join(root, data.name);
  process.stdout.write(`${data.title}\n  from     ${data.home}\n  license  ${data.license}\n`);
  for (const file of data.files) {
    const url = o.mirror ? `${o.mirror.replace(/\/+$/, "")}/${data.name}/${basename(file.saveAs)}` : file.url;
    const path = join(folder, file.saveAs);
    let progress: Progress | undefined;
    let got;
    try {
      got = await download(url, path, {
        sha256: file.sha256,
        ...(file.size !== undefined ? { size: file.size } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
        onProgress: (done, total) => {
          progress ??= new Progress(`  ${basename(file.saveAs)}`, total ?? 0, o.quiet ? null : process.stderr, "bytes");
          progress.update(done);
        },
      });
    } catch (err) {
      progress?.finish();
      // A machine that cannot reach the file's home can still be given the file.
      if (err instanceof DownloadError && !err.message.includes("is already there")) err.message += `; or put the file as published at ${path} and run again`;
      throw err;
    }
    progress?.finish();
    const how = got.cached ? "already there" : got.resumedFrom > 0 ? `downloaded (taken up at ${fmtBytes(got.resumedFrom)})` : "downloaded";
    process.stdout.write(`  ${how}: ${path} (${fmtBytes(got.bytes)}, SHA-256 ${got.sha256.slice(0, 16)}… as published)\n`);
    if (file.unpack) unpack(file, path, folder);
  }
  const benchFile = join(folder, data.benchFile);
  if (!existsSync(benchFile)) throw new FormatError(`${benchFile} is not there after the download: the published files changed; please report it`);
  const problem = data.check?.(readFileSync(benchFile, "utf8"));
  if (problem) throw new FormatError(`${benchFile} ${problem}: the published files changed; please report it`);
  process.stdout.write(`  ${data.note}\n  socialworld bench ${data.name} reads ${benchFile}\n\n`);
}

/** Writes each file of the archive under `folder/<into>`, without the archive's one top folder. */
function unpack(file: PublishedFile, archive: string, folder: string): void {
  const { format, into } = file.unpack!;
  const buf = readFileSync(archive);
  const entries = format === "zip" ? readZip(buf, archive) : readTarGz(buf, archive);
  const target = join(folder, into);
  const files = withoutTopFolder(entries).map((entry) => {
    const rel = normalize(entry.path);
    if (isAbsolute(rel) || rel === ".." || rel.startsWith(`..${sep}`)) throw new ArchiveError(archive, `refused: "${entry.path}" would be written outside ${target}; nothing was unpacked`);
    return { rel, out: join(target, rel), data: entry.data };
  });
  for (const { out, data } of files) {
    mkdirSync(dirname(out), { recursive: true });
    if (statSync(out, { throwIfNoEntry: false })?.isDirectory()) throw new ArchiveError(archive, `${out} is a folder; move it away and run again`);
    writeFileAtomic(out, data);
  }
  process.stdout.write(`  unpacked ${files.length} files into ${target}: ${files.map((f) => f.rel).join(", ")}\n`);
}

/** `top/a`, `top/b` as `a`, `b` where every entry is under one folder (a ZIP made from a folder); `./a` as `a`. */
function withoutTopFolder(entries: readonly ArchiveEntry[]): ArchiveEntry[] {
  const clean = entries.map((e) => ({ ...e, path: e.path.replace(/^(\.\/)+/, "") }));
  const tops = new Set(clean.map((e) => e.path.split("/")[0]));
  if (tops.size !== 1 || clean.some((e) => !e.path.includes("/"))) return clean;
  return clean.map((e) => ({ ...e, path: e.path.slice(e.path.indexOf("/") + 1) }));
}

function list(root: string): number {
  process.stdout.write(`benchmark data in ${root}\n\n`);
  for (const data of OFFICIAL_DATA) {
    const benchFile = join(root, data.name, data.benchFile);
    const there = existsSync(benchFile);
    process.stdout.write(
      `${data.name.padEnd(7)} ${there ? "present" : "missing"}  ${there ? benchFile : `socialworld data get ${data.name}`}\n` +
        `        ${data.title}, ${data.home}\n        license: ${data.license}\n`,
    );
  }
  return 0;
}
