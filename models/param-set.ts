/**
 * A set of trainable tensors seen from TypeScript: a model's parameters, or a LoRA adapter's (one
 * flat buffer each, with gradients and AdamW moments in the same layout). Host access is a view
 * over the engine's memory on the CPU and a copy on a GPU (written back after an edit), so the
 * same code reads and writes both.
 */
import type { AdamWOptions, Device, Dtype, FloatArray, NativeParams, TensorInfo } from "./native.js";

export class ParamSet {
  constructor(
    readonly native: NativeParams,
    readonly device: Device,
    readonly dtype: Dtype,
  ) {}

  get numParams(): number {
    return this.native.numParams;
  }

  tensors(): TensorInfo[] {
    return this.native.tensors();
  }

  /**
   * The parameters on the host, to read: on the CPU a view over the engine's memory (no copy: do
   * not keep it across updates), on a GPU a copy.
   */
  readParams(): FloatArray {
    return this.device === "cpu" ? this.native.params() : this.native.readParams();
  }

  /**
   * Changes the parameters through a host array: on the CPU the engine's own memory, on a GPU a
   * copy that is written back after `edit`. With `overwrite`, edit sets every value, so a GPU
   * copy starts as zeros instead of the current values.
   */
  updateParams(edit: (params: FloatArray) => void, opts: { overwrite?: boolean } = {}): void {
    if (this.device === "cpu") return edit(this.native.params());
    const host = opts.overwrite ? (this.dtype === "float64" ? new Float64Array(this.numParams) : new Float32Array(this.numParams)) : this.native.readParams();
    edit(host);
    this.native.writeParams(host);
  }

  /** The AdamW moments on the host, to read (views on the CPU, copies on a GPU). */
  readMoments(): { m: FloatArray; v: FloatArray } {
    return this.device === "cpu" ? this.native.moments() : this.native.readMoments();
  }

  /** Changes the AdamW moments through host arrays (written back on a GPU), as updateParams. */
  updateMoments(edit: (moments: { m: FloatArray; v: FloatArray }) => void): void {
    if (this.device === "cpu") return edit(this.native.moments());
    const host = this.native.readMoments();
    edit(host);
    this.native.writeMoments(host.m, host.v);
  }

  zeroGrad(): void {
    this.native.zeroGrad();
  }

  gradNorm(): number {
    return this.native.gradNorm();
  }

  adamwStep(opts: AdamWOptions): void {
    this.native.adamwStep(opts);
  }
}
