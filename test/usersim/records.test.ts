import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SchemaElement } from "hyparquet";
import { parquetWriteFile } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { DataError } from "../../worlds/core/errors.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { parseConversationsJsonl, readConversationsFile } from "../../worlds/usersim/records.js";
import { errorOf } from "../data-error.js";

const dir = mkdtempSync(join(tmpdir(), "usersim-records-"));
function tmp(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

// A row as HumanLM's Humanual datasets have it (no field of ours).
const HUMANUAL = {
  prompt: [
    { role: "op_123", content: "AITA for skipping my sister's wedding?", metadata: { subreddit: "AmItheAsshole" } },
    { role: "u_9", content: "NTA, you told her months ago." },
  ],
  completion: "YTA. It was one day and you knew it mattered to her.",
  post_id: "t3_abc",
  user_id: "u_42",
  timestamp: 1700000000,
  metadata: { score: 12 },
  persona: { demographics: { "age group": "NA", occupation: "teacher" }, interests: ["family"], values: ["loyalty to family"], communication: ["blunt"], statistics: ["short replies"] },
};

const line = (o: unknown) => JSON.stringify(o);

describe("conversation records", () => {
  it("read HumanLM's Humanual layout as it is, extra fields and all", () => {
    const [r] = parseConversationsJsonl(`${line(HUMANUAL)}\n`, "opinion.jsonl");
    expect(r).toMatchObject({
      id: "line 1",
      user: "u_42",
      thread: [
        { author: "op_123", text: "AITA for skipping my sister's wedding?" },
        { author: "u_9", text: "NTA, you told her months ago." },
      ],
      reply: "YTA. It was one day and you knew it mattered to her.",
      history: [],
      states: {},
    });
    expect(r!.source).toEqual({ file: "opinion.jsonl", line: 1 });
    expect(r!.persona).toEqual(HUMANUAL.persona);
  });

  it("read the generator's records, whose states are exactly their latent's texts", () => {
    const g = generateUsersim(30, 5);
    const records = parseConversationsJsonl(g.jsonl, "gen.jsonl");
    expect(records).toHaveLength(30);
    expect(records.map((r) => r.id)).toEqual(g.records.map((r) => r.id));
    expect(records[7]!.states).toEqual(g.records[7]!.states);
    expect(records[7]!.latent).toEqual(g.records[7]!.latent);
    expect(records[7]!.history.map((h) => h.text)).toEqual(g.records[7]!.history.map((h) => h.completion));
  });

  it("name the file, the line and the field of what is wrong", () => {
    const good = line({ ...HUMANUAL, id: "a" });
    const g = generateUsersim(2, 1).records[0]!;
    const cases: [string, string | RegExp][] = [
      [line({ ...HUMANUAL, user_id: undefined }), "x.jsonl:2: user_id: missing"],
      [line({ ...HUMANUAL, prompt: [{ role: "op", content: 7 }] }), "x.jsonl:2: prompt[0].content: expected a string"],
      [line({ ...HUMANUAL, prompt: [] }), "x.jsonl:2: prompt: has no messages"],
      [line({ ...HUMANUAL, completion: "  " }), "x.jsonl:2: completion: is empty"],
      [line({ ...HUMANUAL, states: { Stance: "x" } }), "x.jsonl:2: states.Stance: a state's name is a lowercase tag name"],
      [line({ ...g, latent: { ...g.latent, stances: [{ target: "x", position: 3 }] } }), "x.jsonl:2: latent.stances[0].position: a position is -2..2"],
      [line({ ...g, latent: { ...g.latent, belief: "the moon is cheese" } }), "x.jsonl:2: latent.belief: expected a sentence of the belief list (vocabulary.ts BELIEFS)"],
      [line({ ...g, states: { ...g.states, value: "money matters" } }), `x.jsonl:2: states.value: "money matters" is not what latent says ("${g.latent.value}")`],
      ["[1, 2]", "x.jsonl:2: expected a JSON object (a record), got an array"],
      ['{"prompt": [', "x.jsonl:2: the JSON ends too soon: truncated?"],
      ['{"prompt": x}', /^x\.jsonl:2: invalid JSON: Unexpected token/],
      [good, 'x.jsonl:2: id "a" is already used on line 1'],
    ];
    for (const [second, message] of cases) {
      const e = errorOf(() => parseConversationsJsonl(`${good}\n${second}\n`, "x.jsonl"));
      if (typeof message === "string") expect(e.message).toBe(message);
      else expect(e.message).toMatch(message);
      expect(e.line).toBe(2);
    }
    expect(errorOf(() => parseConversationsJsonl("\n\n", "empty.jsonl")).message).toBe("empty.jsonl: no conversation records");
  });

  it("read Parquet rows (nested lists and structs), naming the row of a bad one", async () => {
    const leaf = (name: string, type: "string" | "int64" = "string"): SchemaElement =>
      type === "string" ? { name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" } : { name, type: "INT64", repetition_type: "OPTIONAL" };
    const schema: SchemaElement[] = [
      { name: "root", num_children: 7 },
      leaf("id"),
      leaf("user_id"),
      { name: "prompt", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
      { name: "list", repetition_type: "REPEATED", num_children: 1 },
      { name: "element", repetition_type: "OPTIONAL", num_children: 2 },
      leaf("role"),
      leaf("content"),
      leaf("completion"),
      leaf("persona"),
      { name: "states", repetition_type: "OPTIONAL", num_children: 2 },
      leaf("stance"),
      leaf("goal"),
      leaf("timestamp", "int64"),
    ];
    const write = (file: string, completions: string[]) =>
      parquetWriteFile({
        filename: file,
        schema,
        columnData: [
          { name: "id", data: ["p1", "p2"] },
          { name: "user_id", data: ["u_42", "u_7"] },
          { name: "prompt", data: [[{ role: "op", content: "Is a four-day work week worth it?" }], [{ role: "op", content: "Bike lanes?" }, { role: "u_9", content: "Yes." }]] },
          { name: "completion", data: completions },
          { name: "persona", data: ["A nurse who works nights.", null] },
          { name: "states", data: [{ stance: "strongly agrees with a four-day work week", goal: null }, null] },
          { name: "timestamp", data: [1700000000n, 1700000100n] },
        ],
      });
    const file = join(dir, "humanual.parquet");
    write(file, ["Absolutely, we did it last year.", "No."]);
    const records = await readConversationsFile(file);
    expect(records.map((r) => r.id)).toEqual(["p1", "p2"]);
    expect(records[0]).toMatchObject({ user: "u_42", persona: "A nurse who works nights.", states: { stance: "strongly agrees with a four-day work week" }, source: { file, row: 1 } });
    expect(records[1]).toMatchObject({ thread: [{ author: "op", text: "Bike lanes?" }, { author: "u_9", text: "Yes." }], states: {} });
    expect(records[1]!.persona).toBeUndefined();
    const bad = join(dir, "bad.parquet");
    write(bad, ["Fine.", ""]);
    await expect(readConversationsFile(bad)).rejects.toThrow(`${bad} (row 2): completion: is empty`);
    const corrupt = tmp("corrupt.parquet", "PAR1 this is not parquet at all PAR1");
    await expect(readConversationsFile(corrupt)).rejects.toThrow(/corrupt\.parquet: cannot read as Parquet/);
    await expect(readConversationsFile(join(dir, "nope.jsonl"))).rejects.toThrow(DataError);
  });

  it("read a JSONL file from disk, a Windows-saved one alike", async () => {
    const text = generateUsersim(5, 2).jsonl;
    const a = await readConversationsFile(tmp("a.jsonl", text));
    const b = await readConversationsFile(tmp("b.jsonl", `\ufeff${text.replace(/\n/g, "\r\n")}`));
    expect(b.map((r) => ({ ...r, source: null }))).toEqual(a.map((r) => ({ ...r, source: null })));
  });
});
