import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DEFAULT_HIERARCHY, DEFAULT_HIERARCHY_JSON, RESPONSE_ONLY_HIERARCHY, hierarchyJson, isResponseOnly, parseHierarchy, readHierarchyFile, readLevelPrompt, tags } from "../../worlds/usersim/hierarchy.js";
import { levelPrompt } from "../../worlds/usersim/prompts.js";
import { errorOf } from "../data-error.js";

function tmp(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "usersim-h-"));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

// HumanLM's layout: keys in writing order, each {desc, max_tokens, system_prompt?, threshold?}.
const LAYOUT = {
  stance: { desc: "agreement toward a named target", threshold: 0.9, max_tokens: 48, system_prompt: "../system_prompt/stance.txt" },
  sentiment: { desc: "a valence label", max_tokens: 24 },
  response: { desc: "the reply", threshold: null, max_tokens: 512 },
};

describe("hierarchy files (HumanLM's layout)", () => {
  it("keeps the file's order, reads every field and resolves a level's prompt next to the file", () => {
    const file = tmp("sebr.json", JSON.stringify(LAYOUT, null, 4));
    const h = readHierarchyFile(file);
    expect(tags(h)).toEqual(["stance", "sentiment", "response"]);
    expect(h.states[0]).toMatchObject({ name: "stance", desc: "agreement toward a named target", maxTokens: 48, threshold: 0.9 });
    expect(h.states[0]!.systemPrompt).toBe(join(file, "..", "..", "system_prompt", "stance.txt"));
    expect(h.response).toMatchObject({ maxTokens: 512, threshold: null });
    expect(hierarchyJson(h)).toEqual({ stance: { desc: LAYOUT.stance.desc, max_tokens: 48, threshold: 0.9 }, sentiment: { desc: "a valence label", max_tokens: 24 }, response: { desc: "the reply", max_tokens: 512, threshold: null } });
  });

  it("adds the default response to a file of states alone, and reads a response-only file", () => {
    const states = parseHierarchy({ stance: LAYOUT.stance, goal: { desc: "what for", max_tokens: 48 } }, "sebvgc.json");
    expect(tags(states)).toEqual(["stance", "goal", "response"]);
    expect(states.response.maxTokens).toBe(512);
    const r = parseHierarchy({ response: { desc: "the reply", max_tokens: 256 } }, "r.json");
    expect(isResponseOnly(r)).toBe(true);
    expect(isResponseOnly(DEFAULT_HIERARCHY)).toBe(false);
    expect(tags(DEFAULT_HIERARCHY)).toEqual(["stance", "emotion", "belief", "value", "goal", "communication", "response"]);
  });

  it("ships the default and the response-only recipes as files in that layout", () => {
    const here = join(fileURLToPath(import.meta.url), "..", "..", "..", "worlds", "usersim", "hierarchies");
    const file = readHierarchyFile(join(here, "default.json"));
    expect(hierarchyJson(file)).toEqual(hierarchyJson(DEFAULT_HIERARCHY));
    expect(JSON.parse(readFileSync(join(here, "default.json"), "utf8"))).toEqual(DEFAULT_HIERARCHY_JSON);
    expect(hierarchyJson(readHierarchyFile(join(here, "response-only.json")))).toEqual(hierarchyJson(RESPONSE_ONLY_HIERARCHY));
  });

  it("names the file and the field of every mistake", () => {
    expect(errorOf(() => parseHierarchy([], "a.json")).message).toBe("a.json (top level): expected a JSON object of tags ({\"stance\": {\"desc\", \"max_tokens\"}, ...}), got an array");
    expect(errorOf(() => parseHierarchy({}, "b.json")).message).toBe("b.json (top level): no tags");
    expect(errorOf(() => parseHierarchy({ Stance: LAYOUT.stance }, "c.json")).message).toMatch(/^c\.json \(Stance\): a tag name must be a lowercase identifier/);
    expect(errorOf(() => parseHierarchy({ response: LAYOUT.response, stance: LAYOUT.stance }, "d.json")).message).toBe('d.json (response): "response" must be the last tag (the reply is written from the states before it); it is tag 1 of 2');
    expect(errorOf(() => parseHierarchy({ stance: { max_tokens: 4 } }, "e.json")).message).toBe("e.json (stance.desc): missing");
    expect(errorOf(() => parseHierarchy({ stance: { desc: "x", max_tokens: 0 } }, "f.json")).message).toBe("f.json (stance.max_tokens): expected a positive integer");
    expect(errorOf(() => parseHierarchy({ stance: { desc: "x", max_tokens: 2.5 } }, "g.json")).message).toBe("g.json (stance.max_tokens): expected a positive integer");
    expect(errorOf(() => parseHierarchy({ stance: "agreement" }, "h.json")).message).toBe('h.json (stance): expected an object {"desc", "max_tokens"}');
    expect(errorOf(() => parseHierarchy({ stance: { desc: "x", max_tokens: 4, threshold: "high" } }, "i.json")).message).toBe("i.json (stance.threshold): expected a number or null");
    expect(errorOf(() => parseHierarchy({ constructor: { desc: "x", max_tokens: 4 } }, "k.json")).message).toBe('k.json (constructor): "constructor" cannot be a tag name');
    const many = Object.fromEntries(Array.from({ length: 18 }, (_, i) => [`s${i}`, { desc: "x", max_tokens: 4 }]));
    expect(errorOf(() => parseHierarchy(many, "j.json")).message).toBe("j.json (top level): 18 tags: at most 16 states and the response");
    // Every bound is counted in the reply's grammar: 3,072 tokens in all, the response's too.
    const wide = (n: number, response?: number) => ({ ...Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`s${i}`, { desc: "x", max_tokens: n }])), ...(response ? { response: { desc: "r", max_tokens: response } } : {}) });
    expect(parseHierarchy(wide(128, 1024), "l.json").states).toHaveLength(16);
    expect(errorOf(() => parseHierarchy(wide(128, 1025), "l.json")).message).toBe("l.json (top level): the tags' max_tokens add up to 3073: at most 3072 (the reply's grammar counts each text's characters, 8 a token)");
    expect(errorOf(() => parseHierarchy(wide(161), "m.json")).message).toBe("m.json (top level): the tags' max_tokens add up to 3088 (with the default response's 512): at most 3072 (the reply's grammar counts each text's characters, 8 a token)");
    expect(errorOf(() => parseHierarchy({ response: { desc: "r", max_tokens: 4096 } }, "n.json")).message).toBe("n.json (top level): the tags' max_tokens add up to 4096: at most 3072 (the reply's grammar counts each text's characters, 8 a token)");
    expect(parseHierarchy({ response: { desc: "r", max_tokens: 3072 } }, "n.json").response.maxTokens).toBe(3072);
  });

  it("names the line of broken JSON and a missing file", () => {
    const file = tmp("broken.json", '{\n  "stance": {\n    "desc": "x",\n    "max_tokens": 48,\n  }\n}\n');
    expect(errorOf(() => readHierarchyFile(file)).message).toMatch(/broken\.json:5: invalid JSON/);
    expect(errorOf(() => readHierarchyFile(tmp("cut.json", '{"stance": {"desc": "x"')))).toHaveProperty("line", 1);
    expect(errorOf(() => readHierarchyFile("/nonexistent/h.json")).message).toBe("/nonexistent/h.json: file not found");
  });

  it("uses a level's own prompt file as HumanLM does, and names the field when that file is missing", () => {
    const dir = mkdtempSync(join(tmpdir(), "usersim-lp-"));
    mkdirSync(join(dir, "hierarchy_config"));
    mkdirSync(join(dir, "system_prompt"));
    writeFileSync(join(dir, "system_prompt", "stance.txt"), "You are {name} on {platform}.\nPersona: {persona}\nWrite <stance>...</stance> only.\n");
    const file = join(dir, "hierarchy_config", "s.json");
    writeFileSync(file, JSON.stringify({ stance: LAYOUT.stance, belief: { desc: "b", max_tokens: 8, system_prompt: "../system_prompt/missing.txt" } }));
    const h = readHierarchyFile(file);
    expect(levelPrompt(h, "stance", { user: "maple_fern", platform: "forum", persona: "a nurse" })).toBe("You are maple_fern on forum.\nPersona: a nurse\nWrite <stance>...</stance> only.");
    expect(readLevelPrompt(h, "response")).toBeUndefined();
    expect(errorOf(() => readLevelPrompt(h, "belief")).message).toBe(`${file} (belief.system_prompt): ${join(dir, "system_prompt", "missing.txt")}: file not found`);
  });
});
