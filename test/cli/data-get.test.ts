/**
 * `socialworld data get` against a local HTTP server serving fixture files (no internet in tests):
 * downloads checked against their SHA-256, archives unpacked as they are, a cut-off download taken
 * up with a Range request, a file that is not the one published never kept.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { TOM_DATA, tomData } from "../data-paths.js";
import { defaultBenchFile, defaultBenchmarkDir, OFFICIAL_DATA, type OfficialData } from "../../benchmarks/official-data.js";
import { getOfficialData } from "../../cli/commands/data.js";
import { main } from "../../cli/main.js";
import { download } from "../../store/download.js";

const io = captureOutput();
const FIXTURES = join(import.meta.dirname, "..", "fixtures", "data-get");
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/** What the server does with the next request for a path: cut it off after N bytes, ignore Range, or serve other bytes. */
type Quirk = { cutAfter: number } | { ignoreRange: true } | { body: Buffer };

let server: Server;
let base: string;
const files = new Map<string, Buffer>();
const quirks = new Map<string, Quirk>();
const requests: { path: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url!, "http://x").pathname);
    requests.push({ path, headers: req.headers });
    const quirk = quirks.get(path);
    quirks.delete(path);
    const body = quirk && "body" in quirk ? quirk.body : files.get(path);
    if (!body) {
      res.writeHead(404).end("not found");
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    if (range && !(quirk && "ignoreRange" in quirk)) {
      const start = Number(range[1]);
      if (start >= body.length) {
        res.writeHead(416, { "content-range": `bytes */${body.length}` }).end();
        return;
      }
      res.writeHead(206, { "content-length": body.length - start, "content-range": `bytes ${start}-${body.length - 1}/${body.length}` }).end(body.subarray(start));
      return;
    }
    res.writeHead(200, { "content-length": body.length });
    if (quirk && "cutAfter" in quirk) {
      // Half the file, then the connection drops.
      res.write(body.subarray(0, quirk.cutAfter), () => setTimeout(() => res.destroy(), 20));
      return;
    }
    res.end(body);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

function serve(path: string, body: Buffer): string {
  files.set(path, body);
  return `${base}${path}`;
}

const tomiZip = readFileSync(join(FIXTURES, "tomi", "tomi_balanced_story_types.zip"));
const fantomTar = readFileSync(join(FIXTURES, "fantom", "fantom.tar.gz"));

/** The official entries, with the fixture files' URLs and checksums. */
function fixtureCatalog(): OfficialData[] {
  const tomi = OFFICIAL_DATA.find((d) => d.name === "tomi")!;
  const fantom = OFFICIAL_DATA.find((d) => d.name === "fantom")!;
  const world = Buffer.from('{"agents": ["Ann"]}\n');
  return [
    {
      ...tomi,
      files: [
        { ...tomi.files[0]!, url: serve("/tomi/tomi_balanced_story_types.zip", tomiZip), sha256: sha256(tomiZip), size: tomiZip.length },
        { ...tomi.files[1]!, url: serve("/tomi/world.json", world), sha256: sha256(world), size: world.length },
      ],
    },
    { ...fantom, files: [{ ...fantom.files[0]!, url: serve("/fantom/fantom.tar.gz", fantomTar), sha256: sha256(fantomTar) }] },
  ];
}

describe("socialworld data get", () => {
  it("downloads, checks and unpacks each benchmark as published, says its license, and fetches nothing twice", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-data-"));
    const [tomi, fantom] = fixtureCatalog();
    await getOfficialData(tomi!, dir, { quiet: true });
    await getOfficialData(fantom!, dir, { quiet: true });
    // The archive's top folder goes; the files are byte for byte those inside it.
    const val = readFileSync(join(dir, "tomi", "original", "fb_all_val.txt"), "utf8");
    expect(val).toMatch(/^1 \w+ entered the \w+\.\n/);
    expect(existsSync(join(dir, "tomi", "original", "fb_all_val.trace"))).toBe(true);
    expect(existsSync(join(dir, "tomi", "original", "world.json"))).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, "fantom", "fantom_v1.json"), "utf8"))[0].set_id).toBe("1-1-1");
    // A pax header's long name is the file's name.
    expect(existsSync(join(dir, "fantom", "notes", `${"a".repeat(110)}.txt`))).toBe(true);
    expect(io.out).toContain("license  CC BY-NC 4.0");
    expect(io.out).toContain("license  the code is MIT; the authors ask that the data be used for evaluation only");
    expect(io.out).toContain(`socialworld bench tomi reads ${join(dir, "tomi", "original", "fb_all_val.txt")}`);
    expect(existsSync(join(dir, "tomi", "tomi_balanced_story_types.zip.part"))).toBe(false);

    const before = requests.length;
    io.out = "";
    await getOfficialData(tomi!, dir, { quiet: true });
    expect(requests.length).toBe(before);
    expect(io.out).toContain("already there");
  });

  it("takes a cut-off download up where it stopped, with a Range request", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-data-"));
    const body = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 251));
    const url = serve("/big.bin", body);
    const path = join(dir, "big.bin");
    quirks.set("/big.bin", { cutAfter: 100_000 });
    await expect(download(url, path, { sha256: sha256(body) })).rejects.toThrow(/stopped after \d+ (of 300000 )?bytes.*run the command again/);
    expect(existsSync(path)).toBe(false);
    const kept = statSync(`${path}.part`).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(body.length);
    const got = await download(url, path, { sha256: sha256(body) });
    expect(requests.at(-1)!.headers.range).toBe(`bytes=${kept}-`);
    expect(got).toMatchObject({ resumedFrom: kept, cached: false, bytes: body.length });
    expect(readFileSync(path).equals(body)).toBe(true);
    expect(existsSync(`${path}.part`)).toBe(false);
  });

  it("starts over when the server ignores the Range request", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-data-"));
    const body = Buffer.from("the whole file, sent again from its first byte\n".repeat(100));
    const url = serve("/norange.txt", body);
    const path = join(dir, "norange.txt");
    writeFileSync(`${path}.part`, body.subarray(0, 1000));
    quirks.set("/norange.txt", { ignoreRange: true });
    expect(await download(url, path, { sha256: sha256(body) })).toMatchObject({ resumedFrom: 0 });
    expect(readFileSync(path).equals(body)).toBe(true);
  });

  it("never keeps a file that is not the one published, and leaves no part to resume from", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-data-"));
    const url = serve("/tampered.json", Buffer.from("[]"));
    const path = join(dir, "tampered.json");
    await expect(download(url, path, { sha256: sha256("something else") })).rejects.toThrow(
      `${url}: the file downloaded is not the one published (SHA-256 ${sha256("[]")}, expected ${sha256("something else")}); nothing was kept`,
    );
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.part`)).toBe(false);
    // A file of that name that is not the expected one is not overwritten.
    writeFileSync(path, "mine");
    await expect(download(url, path, { sha256: sha256("[]") })).rejects.toThrow(`${path} is already there but is not the file expected`);
    expect(readFileSync(path, "utf8")).toBe("mine");
  });

  it("refuses an archive that would write outside its folder, before writing anything", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-data-"));
    const evil = readFileSync(join(FIXTURES, "fantom", "evil.tar.gz"));
    const fantom = OFFICIAL_DATA.find((d) => d.name === "fantom")!;
    const data = { ...fantom, files: [{ ...fantom.files[0]!, url: serve("/evil/fantom.tar.gz", evil), sha256: sha256(evil) }] };
    await expect(getOfficialData(data, dir, { quiet: true })).rejects.toThrow('refused: "../escaped.txt" would be written outside');
    expect(existsSync(join(dir, "escaped.txt"))).toBe(false);
    expect(existsSync(join(dir, "fantom", "fantom_v1.json"))).toBe(false);
  });

  it("from the command line: a mirror serving other bytes fails in one line per benchmark, saying how to supply the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-data-"));
    quirks.set("/hitom/Hi-ToM_data.json", { body: Buffer.from('{"data": []}') });
    const code = await main(["data", "get", "hitom", "--dir", dir, "--mirror", base, "--quiet"]);
    expect(code).toBe(1);
    expect(io.err.trim().split("\n")).toHaveLength(1);
    expect(io.err).toContain(`socialworld data: hitom: ${base}/hitom/Hi-ToM_data.json: the file downloaded is not the one published`);
    expect(io.err).toContain(`or put the file as published at ${join(dir, "hitom", "Hi-ToM_data.json")} and run again`);
    expect(io.out).toContain("license  Apache-2.0");
    expect(existsSync(join(dir, "hitom", "Hi-ToM_data.json"))).toBe(false);
    expect(await main(["data", "get", "tomi", "--mirror", "ftp://x"])).toBe(2);
    expect(io.err).toContain("--mirror: expected an http:// or https:// URL");
    expect(await main(["data", "get", "babi"])).toBe(2);
    expect(io.err).toContain("expected one of all, tomi, hitom, fantom");
  });

  it("puts the files where `bench` looks without --data ($SOCIALWORLD_BENCHMARKS, else data/benchmarks/ of the checkout)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-data-"));
    expect(defaultBenchmarkDir({})).toBe(join(import.meta.dirname, "..", "..", "data", "benchmarks"));
    expect(defaultBenchFile("tomi", "/d")).toBe(join("/d", "tomi", "original", "fb_all_val.txt"));
    const saved = process.env.SOCIALWORLD_BENCHMARKS;
    process.env.SOCIALWORLD_BENCHMARKS = dir;
    try {
      const store = join(dir, "store");
      expect(await main(["bench", "tomi", "--store", store, "--quiet"])).toBe(2);
      expect(io.err).toContain(`--data: not given, and ${join(dir, "tomi", "original", "fb_all_val.txt")} is not there: run 'socialworld data get tomi' first, or give --data FILE`);
      await getOfficialData(fixtureCatalog()[0]!, dir, { quiet: true });
      io.out = "";
      expect(await main(["bench", "tomi", "--store", store, "--quiet"])).toBe(0);
      expect(io.err).toContain(`data: ${join(dir, "tomi", "original", "fb_all_val.txt")}`);
      expect(io.out).toMatch(/\| \*\*all\*\* +\| +12 \|/);
    } finally {
      if (saved === undefined) delete process.env.SOCIALWORLD_BENCHMARKS;
      else process.env.SOCIALWORLD_BENCHMARKS = saved;
    }
  });

  it.skipIf(!TOM_DATA)("ToMi's checksums are those of the files as published (the shared copy of the same commit)", () => {
    const world = OFFICIAL_DATA.find((d) => d.name === "tomi")!.files.find((f) => f.saveAs === "original/world.json")!;
    expect(sha256(readFileSync(tomData("tomi", "original", "world.json")))).toBe(world.sha256);
    expect(statSync(tomData("tomi", "original", "world.json")).size).toBe(world.size);
  });
});
