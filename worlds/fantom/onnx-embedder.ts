/**
 * A sentence-embedding model the user has on disk, run with onnxruntime-node: a folder with
 * `tokenizer.json` (and `tokenizer_config.json`), and `model.onnx` or `onnx/model.onnx` (an Optimum
 * or sentence-transformers export, e.g. of all-roberta-large-v1, the official FANToM embedder).
 * Sentence vectors are the model's `sentence_embedding` output when it has one, else the mean of
 * its first output (token states) over the attention mask, which is what sentence-transformers'
 * mean pooling computes.
 *
 * Scoring is synchronous (a benchmark's judge returns its verdict at once) but onnxruntime's API
 * is not: the session runs in a worker thread, and each call blocks on an Atomics wait until the
 * worker has answered, then takes the reply with receiveMessageOnPort. Nothing is downloaded.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { Tokenizer } from "@huggingface/tokenizers";
import type { Embedder } from "./embedder.js";

// Runs in the worker (plain JavaScript: it is evaluated, not compiled).
const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const ort = require(workerData.ort);
const { port, signal } = workerData;
const flag = new Int32Array(signal);
let session;
async function handle(msg) {
  let reply;
  try {
    if (msg.type === "open") {
      session = await ort.InferenceSession.create(msg.model, { executionProviders: ["cpu"] });
      reply = { ok: true, inputs: session.inputNames, outputs: session.outputNames };
    } else {
      const feeds = {};
      for (const [name, t] of Object.entries(msg.feeds)) feeds[name] = new ort.Tensor("int64", t.data, t.dims);
      const out = await session.run(feeds);
      const t = out[msg.fetch];
      reply = { ok: true, data: Float32Array.from(t.data), dims: t.dims.map(Number) };
    }
  } catch (e) {
    reply = { ok: false, error: String((e && e.message) || e) };
  }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
port.on("message", handle);
`;

interface Reply {
  ok: boolean;
  error?: string;
  inputs?: string[];
  outputs?: string[];
  data?: Float32Array;
  dims?: number[];
}

const CALL_TIMEOUT_MS = 10 * 60_000;

export class OnnxEmbedder implements Embedder {
  readonly id: string;
  private readonly cache = new Map<string, Float32Array>();

  private constructor(
    dir: string,
    private readonly tokenizer: Tokenizer,
    private readonly maxLength: number,
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly flag: Int32Array,
    private readonly inputs: readonly string[],
    private readonly output: string,
    private readonly pooled: boolean,
  ) {
    this.id = `onnx:${dir}`;
  }

  /** Loads the tokenizer and the model from `dir` (blocking until the session is ready). */
  static open(dir: string): OnnxEmbedder {
    const root = resolve(dir);
    const file = (name: string) => join(root, name);
    if (!existsSync(root)) throw new Error(`embedder folder not found: ${root}`);
    const model = [file("model.onnx"), file("onnx/model.onnx")].find((p) => existsSync(p));
    if (!model) throw new Error(`no model.onnx or onnx/model.onnx in ${root}`);
    if (!existsSync(file("tokenizer.json"))) throw new Error(`no tokenizer.json in ${root}`);
    const readJson = (name: string): Record<string, unknown> => (existsSync(file(name)) ? (JSON.parse(readFileSync(file(name), "utf8")) as Record<string, unknown>) : {});
    const tokenizerConfig = readJson("tokenizer_config.json");
    const tokenizer = new Tokenizer(readJson("tokenizer.json"), tokenizerConfig);
    const st = readJson("sentence_bert_config.json");
    const declared = [st.max_seq_length, tokenizerConfig.model_max_length].find((x) => typeof x === "number" && x > 0 && x < 100_000) as number | undefined;

    const require = createRequire(import.meta.url);
    const signal = new SharedArrayBuffer(4);
    const flag = new Int32Array(signal);
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ort: require.resolve("onnxruntime-node"), port: port2, signal }, transferList: [port2] });
    worker.unref();
    port1.unref();
    const opened = call(port1, flag, { type: "open", model });
    const inputs = opened.inputs ?? [];
    const outputs = opened.outputs ?? [];
    for (const need of ["input_ids", "attention_mask"]) {
      if (!inputs.includes(need)) throw new Error(`${model}: the model has no "${need}" input (inputs: ${inputs.join(", ")})`);
    }
    const pooled = outputs.includes("sentence_embedding");
    const output = pooled ? "sentence_embedding" : outputs[0];
    if (!output) throw new Error(`${model}: the model has no outputs`);
    return new OnnxEmbedder(root, tokenizer, declared ?? 512, worker, port1, flag, inputs, output, pooled);
  }

  embed(texts: readonly string[]): Float32Array[] {
    return texts.map((t) => {
      let v = this.cache.get(t);
      if (!v) {
        v = this.one(t);
        if (this.cache.size > 50_000) this.cache.clear();
        this.cache.set(t, v);
      }
      return v;
    });
  }

  private one(text: string): Float32Array {
    const enc = this.tokenizer.encode(text);
    let ids = enc.ids;
    let mask = enc.attention_mask;
    if (ids.length > this.maxLength) {
      // Keep the closing special token, as the tokenizer's own truncation does.
      ids = [...ids.slice(0, this.maxLength - 1), ids[ids.length - 1]!];
      mask = mask.slice(0, this.maxLength);
    }
    const n = ids.length;
    const feeds: Record<string, { data: BigInt64Array; dims: number[] }> = {
      input_ids: { data: BigInt64Array.from(ids.map((x: number) => BigInt(x))), dims: [1, n] },
      attention_mask: { data: BigInt64Array.from(mask.map((x: number) => BigInt(x))), dims: [1, n] },
    };
    if (this.inputs.includes("token_type_ids")) feeds.token_type_ids = { data: new BigInt64Array(n), dims: [1, n] };
    const r = call(this.port, this.flag, { type: "run", feeds, fetch: this.output });
    const data = r.data!;
    const dims = r.dims!;
    if (this.pooled || dims.length === 2) return data.slice(0, dims[dims.length - 1]);
    if (dims.length !== 3 || dims[1] !== n) throw new Error(`${this.id}: unexpected output shape [${dims.join(", ")}] for ${n} tokens`);
    const dim = dims[2]!;
    const out = new Float32Array(dim);
    let count = 0;
    for (let i = 0; i < n; i++) {
      if (!mask[i]) continue;
      count++;
      for (let d = 0; d < dim; d++) out[d]! += data[i * dim + d]!;
    }
    for (let d = 0; d < dim; d++) out[d]! /= Math.max(count, 1);
    return out;
  }

  /** Stops the worker (the process can also just exit: the worker does not keep it alive). */
  close(): Promise<number> {
    return this.worker.terminate();
  }
}

function call(port: MessagePort, flag: Int32Array, msg: unknown): Reply {
  Atomics.store(flag, 0, 0);
  port.postMessage(msg);
  if (Atomics.wait(flag, 0, 0, CALL_TIMEOUT_MS) === "timed-out") throw new Error("the ONNX embedder did not answer within 10 minutes");
  const got = receiveMessageOnPort(port);
  const reply = got?.message as Reply | undefined;
  if (!reply) throw new Error("the ONNX embedder's worker sent no reply");
  if (!reply.ok) throw new Error(`ONNX embedder: ${reply.error ?? "unknown error"}`);
  return reply;
}
