/**
 * LoRA adapters served over one base model under /v1 (`model: "BASE:ADAPTER"`): listed with their
 * parent, answering as the native engine does with the adapter in use, batched per adapter when
 * requests for several arrive together, added and removed with their folders without a restart,
 * refused with the reason when unknown or broken; and the main server's discovery of adapters in
 * <store>/policies.
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { NativeCompleter } from "../../models/generate.js";
import { DEFAULT_LORA } from "../../models/lora-settings.js";
import { loadAdapter, saveAdapter, useAdapterFolder } from "../../models/peft-adapter.js";
import { loadAgent } from "../../agents/registry.js";
import { main } from "../../cli/main.js";
import { startPolicyServer, type PolicyServer } from "../../server/openai/app.js";
import { discoverPolicies } from "../../server/openai/models.js";
import { Rng } from "../../worlds/core/rng.js";
import { captureOutput } from "../capture.js";
import { tempDir, tinyCheckpoint } from "../policy/fixtures.js";
import { post } from "./fixtures.js";

const io = captureOutput();
let base: string;
let adapterA: string;
let adapterB: string;
let root: string;
let server: PolicyServer;
let url: string;

/** An adapter of `baseDir` with seeded, large enough tensors that it changes what the model says. */
function writeAdapter(baseDir: string, seed: string, targets = DEFAULT_LORA.targets): string {
  const ck = loadCheckpoint(baseDir);
  const adapter = ck.model.newAdapter({ ...DEFAULT_LORA, r: 4, alpha: 16, targets }, seed, baseDir);
  const rng = Rng.seeded(seed);
  adapter.weights.updateParams((p) => p.forEach((_, i) => (p[i] = (rng.next() - 0.5) * 0.6)));
  const dir = tempDir("sw-adapter-");
  saveAdapter(dir, adapter);
  return dir;
}

/** What the native engine says, greedy, with the adapter folder in use (or none). */
async function direct(adapterDir: string | null, prompt: string): Promise<string> {
  const ck = loadCheckpoint(base);
  if (adapterDir) useAdapterFolder(ck.model, adapterDir);
  const text = ck.tokenizer.applyChatTemplate([{ role: "user", content: prompt }], { addGenerationPrompt: true });
  const [c] = await new NativeCompleter("direct", ck.model, ck.tokenizer).complete([text], { maxNewTokens: 12, temperature: 0 });
  return c!.text;
}

function loadAdapterOf(ck: ReturnType<typeof loadCheckpoint>, dir: string) {
  return loadAdapter(dir, ck.model.native, ck.model.engine.numLayers).adapter;
}

const ask = (model: string, prompt = "Where is the spinach?") => post(url, { model, temperature: 0, max_tokens: 12, messages: [{ role: "user", content: prompt }] });

beforeAll(async () => {
  base = (await tinyCheckpoint(71)).dir;
  adapterA = writeAdapter(base, "a");
  adapterB = writeAdapter(base, "b", ["q_proj", "v_proj"]);
  root = tempDir("sw-adapter-root-");
  server = await startPolicyServer({ models: [{ id: "base", dir: base }, { id: "tuned", dir: adapterA }, { id: "base:second", dir: adapterB }], adapterRoot: root, port: 0, host: "127.0.0.1" });
  url = `${server.baseUrl}/chat/completions`;
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe("LoRA adapters under /v1", () => {
  it("are listed as BASE:ADAPTER with their parent", async () => {
    const body = (await (await fetch(`${server.baseUrl}/models`)).json()) as any;
    expect(body.data.map((m: { id: string; parent?: string }) => [m.id, m.parent])).toEqual([
      ["base", undefined],
      ["base:tuned", "base"],
      ["base:second", "base"],
    ]);
    expect(((await (await fetch(`${server.baseUrl}/models/base:tuned`)).json()) as any).parent).toBe("base");
    expect(server.service.health()[0]!.adapters!.map((a) => a.name)).toEqual(["tuned", "second"]);
  });

  it("answer as the native engine does with the adapter in use, each over the same base", async () => {
    const [plain, tuned, second] = await Promise.all([ask("base"), ask("base:tuned"), ask("base:second")]);
    expect([plain.status, tuned.status, second.status]).toEqual([200, 200, 200]);
    expect(tuned.json.model).toBe("base:tuned");
    expect(plain.json.choices[0].message.content).toBe(await direct(null, "Where is the spinach?"));
    expect(tuned.json.choices[0].message.content).toBe(await direct(adapterA, "Where is the spinach?"));
    expect(second.json.choices[0].message.content).toBe(await direct(adapterB, "Where is the spinach?"));
    expect(new Set([plain, tuned, second].map((r) => r.json.choices[0].message.content)).size).toBe(3);
    // Interleaved, many at once: each still gets its adapter's reply (batches never mix adapters).
    const many = await Promise.all(Array.from({ length: 9 }, (_, i) => ask(["base", "base:tuned", "base:second"][i % 3]!)));
    many.forEach((r, i) => expect(r.json.choices[0].message.content).toBe([plain, tuned, second][i % 3]!.json.choices[0].message.content));
  });

  it("come and go with their folders in --adapters ROOT, without a restart", async () => {
    expect((await ask("base:late")).status).toBe(404);
    cpSync(adapterA, join(root, "late"), { recursive: true });
    const late = await ask("base:late");
    expect(late.status).toBe(200);
    expect(late.json.choices[0].message.content).toBe(await direct(adapterA, "Where is the spinach?"));
    rmSync(join(root, "late"), { recursive: true });
    const gone = await ask("base:late");
    expect(gone.status).toBe(404);
    expect(gone.json.error).toMatchObject({ code: "model_not_found", param: "model" });
    expect(gone.json.error.message).toMatch(/served here: base, base:tuned, base:second/);
  });

  it("say why an adapter cannot be loaded, and the base goes on serving", async () => {
    const broken = join(root, "broken");
    cpSync(adapterA, broken, { recursive: true });
    writeFileSync(join(broken, "adapter_config.json"), JSON.stringify({ peft_type: "LORA", r: 4, lora_alpha: 16, target_modules: ["q_proj"], use_dora: true, base_model_name_or_path: base }));
    const r = await ask("base:broken");
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe("model_load_failed");
    expect(r.json.error.message).toMatch(/the LoRA adapter `broken` cannot be loaded: .*use_dora.*DoRA adapters are not supported/);
    rmSync(broken, { recursive: true });
    expect((await ask("base")).status).toBe(200);
  });

  it("serve-policy refuses an adapter whose base is not served", async () => {
    expect(await main(["serve-policy", adapterA, "--port", "0"])).toBe(2);
    expect(io.err).toMatch(/is a LoRA adapter whose base model is not served here: give its base folder too, or name it BASE:/);
  });

  it("share one model and its queue as policy agents: each adapter decodes with its own, concurrently", async () => {
    const ck = loadCheckpoint(base);
    const completer = new NativeCompleter("base", ck.model, ck.tokenizer);
    const a = completer.withAdapter("a", loadAdapterOf(ck, adapterA));
    const b = completer.withAdapter("b", loadAdapterOf(ck, adapterB));
    const prompt = ck.tokenizer.applyChatTemplate([{ role: "user", content: "Where is the spinach?" }], { addGenerationPrompt: true });
    const settings = { maxNewTokens: 12, temperature: 0 };
    const got = await Promise.all([completer, a, b, a, completer, b].map((c) => c.complete([prompt], settings).then((r) => r[0]!.text)));
    const want = [await direct(null, "Where is the spinach?"), await direct(adapterA, "Where is the spinach?"), await direct(adapterB, "Where is the spinach?")];
    expect(got).toEqual([want[0], want[1], want[2], want[1], want[0], want[2]]);
    // policy:ADIR loads the base its config names; a base that is not there is bad input, named.
    await expect(loadAgent(`policy:${adapterA}`)).resolves.toBeDefined();
    const lost = tempDir("sw-lost-");
    cpSync(adapterA, lost, { recursive: true });
    writeFileSync(join(lost, "adapter_config.json"), JSON.stringify({ peft_type: "LORA", r: 4, lora_alpha: 16, target_modules: ["q_proj"], base_model_name_or_path: "Qwen/Qwen2.5-0.5B" }));
    await expect(loadAgent(`policy:${lost}`)).rejects.toThrow(/adapter_config\.json.*base_model_name_or_path.*"Qwen\/Qwen2\.5-0\.5B", not a checkpoint folder here/);
  });

  it("are found beside their base in <store>/policies", () => {
    const store = tempDir("sw-store-");
    mkdirSync(join(store, "policies"));
    cpSync(base, join(store, "policies", "policy"), { recursive: true });
    // An adapter trained on the base where it now lies in the store, and one named for its base.
    const tuned = join(store, "policies", "tuned");
    cpSync(adapterA, tuned, { recursive: true });
    writeFileSync(join(tuned, "adapter_config.json"), JSON.stringify({ peft_type: "LORA", r: 4, lora_alpha: 16, target_modules: ["q_proj"], base_model_name_or_path: join(store, "policies", "policy") }));
    cpSync(adapterB, join(store, "policies", "orphan"), { recursive: true });
    const found = discoverPolicies(store, [`policy:extra=${adapterB}`]);
    expect(found.map((m) => [m.id, (m.adapters ?? []).map((a) => a.name)])).toEqual([["policy", ["tuned", "extra"]]]);
  });
});
