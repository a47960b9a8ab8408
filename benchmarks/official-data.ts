/**
 * Where each benchmark's official files come from, what they must hash to, their license, and
 * where `socialworld data get` puts them. The folder is laid out as the team's shared copy
 * (`shared/data/tom/`): `tomi/original/fb_all_val.txt`, `hitom/…`, `fantom/…`, so
 * SOCIALWORLD_TOM_DATA may point at it too. Files are kept as published (archives are unpacked,
 * nothing is converted).
 *
 * Checksums: ToMi's and Hi-ToM's are the SHA-256 of the files in their repositories at the
 * commits named (computed here from those commits' blobs, which raw.githubusercontent.com serves
 * byte for byte). FANToM's is the one its authors publish in their own loader
 * (skywalker023/fantom, task/dataset_loader.py, `expected_hash`): the archive is hosted on Google
 * Cloud Storage, which this project's machines cannot reach, so it was not recomputed here; what
 * it unpacks to is checked for its format (a JSON array of question sets).
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { packageRoot } from "../worlds/question/prompts.js";

/** One file as published. */
export interface PublishedFile {
  readonly url: string;
  /** Where it is saved, relative to the benchmark's folder. */
  readonly saveAs: string;
  readonly sha256: string;
  /** Its size in bytes where known (the progress bar's total when the server sends none). */
  readonly size?: number;
  /** An archive to unpack: each file inside under `into` (relative to the benchmark's folder), without the archive's top folder. */
  readonly unpack?: { readonly format: "zip" | "tar.gz"; readonly into: string };
}

export interface OfficialData {
  readonly name: "tomi" | "hitom" | "fantom";
  readonly title: string;
  /** The public home of the data. */
  readonly home: string;
  readonly license: string;
  readonly files: readonly PublishedFile[];
  /** The file `bench <name>` reads when no --data is given, relative to the benchmark's folder. */
  readonly benchFile: string;
  /** What the files hold (which splits), said after the download. */
  readonly note: string;
  /** Checks what was unpacked (the file `bench` reads is there and has the expected shape); a message where not. */
  readonly check?: (text: string) => string | undefined;
}

const TOMI_COMMIT = "dea2bca9b366c41cdab0bd717353cc02453e193e";
const HITOM_COMMIT = "56dda76fbbbcd510d51e91837fe19b7df2108562";

export const OFFICIAL_DATA: readonly OfficialData[] = [
  {
    name: "tomi",
    title: "ToMi (Le, Boureau and Nickel, EMNLP 2019)",
    home: "https://github.com/facebookresearch/ToMi",
    license: "CC BY-NC 4.0 (non-commercial use, with attribution); https://creativecommons.org/licenses/by-nc/4.0/",
    files: [
      {
        url: `https://raw.githubusercontent.com/facebookresearch/ToMi/${TOMI_COMMIT}/tomi_balanced_story_types.zip`,
        saveAs: "tomi_balanced_story_types.zip",
        sha256: "d8389ecf09749b4a49c56752a8ce44afac8c3d363391b5c29c8fa7032613ece6",
        size: 403_507,
        unpack: { format: "zip", into: "original" },
      },
      {
        url: `https://raw.githubusercontent.com/facebookresearch/ToMi/${TOMI_COMMIT}/tomi/world.json`,
        saveAs: "original/world.json",
        sha256: "681f5522d91816fb2f7d0bac9473de55df608293435f07f44d878d34fa65f6e0",
        size: 2_236,
      },
    ],
    benchFile: "original/fb_all_val.txt",
    note: "train, val and test splits (fb_all_*.txt with their .trace files), 5,994 questions each in train and val",
    check: (text) => (/^1 .+\n/.test(text) && /\t\S+\t1\s*$/m.test(text) ? undefined : "is not a bAbI-style ToMi file"),
  },
  {
    name: "hitom",
    title: "Hi-ToM (He, Wu et al., Findings of EMNLP 2023)",
    home: "https://github.com/ying-hui-he/Hi-ToM_dataset",
    license: "Apache-2.0; https://github.com/ying-hui-he/Hi-ToM_dataset/blob/main/LICENSE",
    files: [
      {
        url: `https://raw.githubusercontent.com/ying-hui-he/Hi-ToM_dataset/${HITOM_COMMIT}/Hi-ToM_data.json`,
        saveAs: "Hi-ToM_data.json",
        sha256: "1c4077bbcdf815b91dbb791b60dbce3920a98bd63317954ebf94a532d43cd573",
        size: 2_267_625,
      },
    ],
    benchFile: "Hi-ToM_data.json",
    note: "the whole evaluation set (600 questions, each in the CoTP and VP prompting styles; no official split)",
    check: (text) => (/^\s*\{\s*"data"\s*:\s*\[/.test(text) ? undefined : 'is not Hi-ToM\'s {"data": [...]} file'),
  },
  {
    name: "fantom",
    title: "FANToM (Kim et al., EMNLP 2023)",
    home: "https://github.com/skywalker023/fantom",
    license: "the code is MIT; the authors ask that the data be used for evaluation only, never for training (README, 'Intended Use of Data')",
    files: [
      {
        url: "https://storage.googleapis.com/ai2-mosaic-public/projects/fantom/fantom.tar.gz",
        saveAs: "fantom.tar.gz",
        sha256: "1d08dfa0ea474c7f83b9bc7e3a7b466eab25194043489dd618b4c5223e1253a4",
        unpack: { format: "tar.gz", into: "." },
      },
    ],
    benchFile: "fantom_v1.json",
    note: "fantom_v1.json, the whole benchmark (for evaluation only)",
    check: (text) => (/^\s*\[\s*\{[^]*?"set_id"/.test(text.slice(0, 65_536)) ? undefined : "is not FANToM's JSON array of question sets"),
  },
];

export type OfficialName = OfficialData["name"];
export const OFFICIAL_NAMES = OFFICIAL_DATA.map((d) => d.name);

export function officialData(name: string): OfficialData | undefined {
  return OFFICIAL_DATA.find((d) => d.name === name);
}

/**
 * Where `data get` puts the files unless --dir says otherwise: $SOCIALWORLD_BENCHMARKS, else
 * data/benchmarks/ of the checkout, wherever the command is run from.
 */
export function defaultBenchmarkDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.SOCIALWORLD_BENCHMARKS || join(packageRoot(), "data", "benchmarks"));
}

/** The file `bench <name>` reads when no --data is given (undefined for a benchmark with no official download). */
export function defaultBenchFile(name: string, dir = defaultBenchmarkDir()): string | undefined {
  const d = officialData(name);
  return d ? join(dir, d.name, d.benchFile) : undefined;
}

/** The benchmark whose format `path` has, judged from its first 64 KB (undefined when none, unreadable or not a regular file). */
export function looksLike(path: string): OfficialData | undefined {
  let head: string;
  try {
    // Opening a pipe waits for a writer: only a regular file is read.
    if (!statSync(path).isFile()) return undefined;
    const fd = openSync(path, "r");
    try {
      const buf = Buffer.alloc(65_536);
      head = buf.toString("utf8", 0, readSync(fd, buf, 0, buf.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  return OFFICIAL_DATA.find((d) => d.check?.(head) === undefined);
}
