/** A small builder for ONNX graphs: nodes with generated output names, constants and weights. */
import { AttributeType, DataType } from "./proto.js";

export type Attr = number | readonly number[] | string | { readonly float: number } | { readonly floats: readonly number[] };

interface Node {
  input: string[];
  output: string[];
  name: string;
  op_type: string;
  attribute: Record<string, unknown>[];
}

export interface Initializer {
  readonly name: string;
  readonly dims: readonly number[];
  readonly dataType: number;
  readonly bytes: Uint8Array;
}

export class GraphBuilder {
  readonly nodes: Node[] = [];
  readonly initializers: Initializer[] = [];
  private count = 0;

  /** Adds a node; returns its output names (`outputs` of them, or the names given). */
  op(type: string, inputs: readonly string[], attrs: Record<string, Attr> = {}, outputs: number | readonly string[] = 1): string[] {
    const id = this.count++;
    const outs = typeof outputs === "number" ? Array.from({ length: outputs }, (_, i) => `/${type}_${id}/out${i}`) : [...outputs];
    this.nodes.push({ input: [...inputs], output: outs, name: `/${type}_${id}`, op_type: type, attribute: Object.entries(attrs).map(([name, v]) => attribute(name, v)) });
    return outs;
  }

  /** A single-output node. */
  op1(type: string, inputs: readonly string[], attrs: Record<string, Attr> = {}, output?: string): string {
    return this.op(type, inputs, attrs, output ? [output] : 1)[0]!;
  }

  weight(name: string, data: Float32Array, dims: readonly number[]): string {
    this.initializers.push({ name, dims, dataType: DataType.FLOAT, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    return name;
  }

  int64(values: readonly number[], dims: readonly number[] = [values.length]): string {
    const name = `/const_${this.count++}`;
    const data = BigInt64Array.from(values.map((v) => BigInt(v)));
    this.initializers.push({ name, dims, dataType: DataType.INT64, bytes: new Uint8Array(data.buffer) });
    return name;
  }

  float(values: readonly number[], dims: readonly number[] = [values.length]): string {
    const name = `/const_${this.count++}`;
    const data = Float32Array.from(values);
    this.initializers.push({ name, dims, dataType: DataType.FLOAT, bytes: new Uint8Array(data.buffer) });
    return name;
  }
}

function attribute(name: string, v: Attr): Record<string, unknown> {
  if (typeof v === "number") return { name, type: AttributeType.INT, i: v };
  if (typeof v === "string") return { name, type: AttributeType.STRING, s: new TextEncoder().encode(v) };
  if (Array.isArray(v)) return { name, type: AttributeType.INTS, ints: [...(v as number[])] };
  if ("float" in (v as object)) return { name, type: AttributeType.FLOAT, f: (v as { float: number }).float };
  return { name, type: AttributeType.FLOATS, floats: [...(v as { floats: number[] }).floats] };
}
