/**
 * A text encoder the user has on disk, run with onnxruntime-node: a folder with `tokenizer.json`
 * (and `tokenizer_config.json`), and `model.onnx` or `onnx/model.onnx` (an Optimum or
 * sentence-transformers export of a BERT-like model). It gives a text's tokens and one of the
 * model's outputs; judges build on it (the sentence embedder, onnx-embedder.ts, pools it; the
 * social world's BERTScore matches its token states).
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

export interface EncoderOutput {
  /** Token ids after truncation, special tokens included. */
  readonly ids: readonly number[];
  readonly mask: readonly number[];
  readonly data: Float32Array;
  readonly dims: readonly number[];
}

const CALL_TIMEOUT_MS = 10 * 60_000;

export class OnnxEncoder {
  /** `onnx:<absolute folder>`. */
  readonly id: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /** The tokenizer's special tokens that open and close a sequence ([CLS] and [SEP], <s> and </s>), as ids. */
  readonly boundaryIds: readonly number[];

  private constructor(
    dir: string,
    private readonly tokenizer: Tokenizer,
    private readonly maxLength: number,
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly flag: Int32Array,
    inputs: readonly string[],
    outputs: readonly string[],
    boundaryIds: readonly number[],
  ) {
    this.id = `onnx:${dir}`;
    this.inputs = inputs;
    this.outputs = outputs;
    this.boundaryIds = boundaryIds;
  }

  /** Loads the tokenizer and the model from `dir` (blocking until the session is ready); `role` names it in errors. */
  static open(dir: string, role = "encoder"): OnnxEncoder {
    const root = resolve(dir);
    const file = (name: string) => join(root, name);
    if (!existsSync(root)) throw new Error(`${role} folder not found: ${root}`);
    const model = [file("model.onnx"), file("onnx/model.onnx")].find((p) => existsSync(p));
    if (!model) throw new Error(`no model.onnx or onnx/model.onnx in ${root}`);
    if (!existsSync(file("tokenizer.json"))) throw new Error(`no tokenizer.json in ${root}`);
    const readJson = (name: string): Record<string, unknown> => (existsSync(file(name)) ? (JSON.parse(readFileSync(file(name), "utf8")) as Record<string, unknown>) : {});
    const tokenizerConfig = readJson("tokenizer_config.json");
    const tokenizer = new Tokenizer(readJson("tokenizer.json"), tokenizerConfig);
    const st = readJson("sentence_bert_config.json");
    const declared = [st.max_seq_length, tokenizerConfig.model_max_length].find((x) => typeof x === "number" && x > 0 && x < 100_000) as number | undefined;
    const boundary: number[] = [];
    for (const key of ["cls_token", "sep_token", "bos_token", "eos_token"]) {
      const v = tokenizerConfig[key];
      const content = typeof v === "string" ? v : v && typeof v === "object" && typeof (v as { content?: unknown }).content === "string" ? (v as { content: string }).content : undefined;
      const id = content === undefined ? undefined : tokenizer.token_to_id(content);
      if (id !== undefined && !boundary.includes(id)) boundary.push(id);
    }

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
    if (outputs.length === 0) throw new Error(`${model}: the model has no outputs`);
    return new OnnxEncoder(root, tokenizer, declared ?? 512, worker, port1, flag, inputs, outputs, boundary);
  }

  /** Tokenizes `text` (truncated to the model's length) and runs the model, returning output `fetch`. */
  run(text: string, fetch: string): EncoderOutput {
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
    const r = call(this.port, this.flag, { type: "run", feeds, fetch });
    return { ids, mask, data: r.data!, dims: r.dims! };
  }

  /** Stops the worker (the process can also just exit: the worker does not keep it alive). */
  close(): Promise<number> {
    return this.worker.terminate();
  }
}

function call(port: MessagePort, flag: Int32Array, msg: unknown): Reply {
  Atomics.store(flag, 0, 0);
  port.postMessage(msg);
  if (Atomics.wait(flag, 0, 0, CALL_TIMEOUT_MS) === "timed-out") throw new Error("the ONNX encoder did not answer within 10 minutes");
  const got = receiveMessageOnPort(port);
  const reply = got?.message as Reply | undefined;
  if (!reply) throw new Error("the ONNX encoder's worker sent no reply");
  if (!reply.ok) throw new Error(`ONNX encoder: ${reply.error ?? "unknown error"}`);
  return reply;
}
