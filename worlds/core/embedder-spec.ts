/** An embedder from its spec, as `--embedder` (FANToM, usersim) and $SOCIALWORLD_FANTOM_EMBEDDER give it. */
import { LexicalEmbedder, type Embedder } from "./embedder.js";

/**
 * `lexical` (default) or `onnx:DIR`. The ONNX embedder is loaded lazily from its own module so
 * that onnxruntime-node is never loaded by users who do not ask for it.
 */
export async function createEmbedder(spec: string | undefined): Promise<Embedder> {
  const s = (spec ?? "").trim();
  if (s === "" || s === "lexical") return new LexicalEmbedder();
  if (s.startsWith("onnx:")) {
    const { OnnxEmbedder } = await import("./onnx-embedder.js");
    return OnnxEmbedder.open(s.slice("onnx:".length));
  }
  throw new Error(`unknown embedder "${s}" (expected lexical or onnx:DIR)`);
}
