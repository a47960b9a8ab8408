/**
 * The documentation holds together: the README stays a front door (the two commands first, at most
 * 200 lines), and every relative link in README.md and docs/ names a file that exists and, after a
 * `#`, a heading of that file (GitHub's anchors) or an explicit `<a id>`. The checks are shown to
 * catch a broken link and a broken anchor on made-up pages.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

/** README.md and every Markdown file under docs/. */
function pages(): string[] {
  const found = [join(root, "README.md")];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".md")) found.push(p);
    }
  };
  if (existsSync(join(root, "docs"))) walk(join(root, "docs"));
  return found;
}

/** Text outside fenced code blocks and inline code spans, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of markdown.replace(/^```[^]*?^```/gm, "").split("\n")) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = h[1]!
        .replace(/<[^>]*>/g, "")
        .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-");
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
  }
  for (const m of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

/** Every relative link of a page that does not resolve: `target (why)`. */
function brokenLinks(file: string, markdown: string, read: (path: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const m of prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [path, anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
    const text = read(resolved);
    if (text === undefined) {
      broken.push(`${target} (no such file)`);
      continue;
    }
    if (anchor !== undefined && anchor !== "" && resolved.endsWith(".md") && !anchors(text).has(decodeURIComponent(anchor))) {
      broken.push(`${target} (no heading #${anchor} in ${relative(root, resolved)})`);
    }
  }
  return broken;
}

const readFromDisk = (path: string): string | undefined => {
  if (!existsSync(path)) return undefined;
  return statSync(path).isDirectory() ? "" : readFileSync(path, "utf8");
};

describe("the documentation", () => {
  it("opens the README with the two commands and keeps it a front door", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const first = /```sh\n([^]*?)```/.exec(readme)?.[1] ?? "";
    expect(first).toMatch(/^npm install && npm start\b/m);
    expect(first).toMatch(/^npm test\b/m);
    expect(readme.indexOf("```sh")).toBeLessThan(readme.indexOf("\n## "));
    expect(readme.split("\n").length).toBeLessThanOrEqual(200);
  });

  it("has no relative link to a missing file or heading, in README.md and docs/", () => {
    const files = pages();
    expect(files.length).toBeGreaterThan(10);
    const broken = files.flatMap((f) => brokenLinks(f, readFileSync(f, "utf8"), readFromDisk).map((b) => `${relative(root, f)}: ${b}`));
    expect(broken).toEqual([]);
  });

  it("finds a broken link and a broken anchor, and takes GitHub's anchors", () => {
    const pagesByPath: Record<string, string> = {
      "/d/a.md": "# Top\n\n## Constrained decoding (`models/grammar/`)\n\n## V8's defaults\n\n## Twice\n\n## Twice\n\n<a id=\"here\"></a>\n",
    };
    const read = (p: string) => pagesByPath[p];
    const page = (body: string) => brokenLinks("/d/a.md", body, read);
    expect(page("[x](a.md#constrained-decoding-modelsgrammar) [y](#v8s-defaults) [z](#twice-1) [w](#here) [u](https://e.org/x#y)")).toEqual([]);
    expect(page("[x](b.md)")).toEqual(["b.md (no such file)"]);
    expect(page("see [x](a.md#nowhere)")).toHaveLength(1);
    expect(page("`[not a link](b.md)` and\n```\n[nor](b.md)\n```\n")).toEqual([]);
  });
});
