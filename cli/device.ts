/**
 * --device and --precision: where the commands that run policies run them. The model module is
 * loaded only when a GPU is asked for, so commands that never run a policy start as fast as before.
 */
import { z } from "zod";
import { DeviceChoiceSchema, MatmulPrecisionSchema, type DeviceChoice } from "../models/device-choice.js";
import type { MatmulPrecision } from "../models/native.js";
import { UsageError } from "./args.js";

export const DEVICE_HELP = `  --device cpu|cuda|auto      where policies run (default cpu; auto: cuda where the addon has it and a GPU is visible)
  --precision fp32|tf32|bf16  the GPU's matrix products (default bf16; fp32 for results equal to the CPU's)`;

export const deviceArgs = {
  device: DeviceChoiceSchema.default("cpu"),
  precision: MatmulPrecisionSchema.optional(),
};

/** Applies --device / --precision to the models made from now on; a device that cannot run is a usage error. */
export async function useDevice(a: { device: DeviceChoice; precision?: MatmulPrecision | undefined }): Promise<void> {
  if (a.device === "cpu" && a.precision === undefined) return; // the default
  try {
    const { setModelDevice } = await import("../models/model.js");
    setModelDevice(a.device, a.precision);
  } catch (err) {
    throw new UsageError(`--device ${a.device}: ${(err as Error).message}`);
  }
}

export const CHECKPOINTING_HELP = `  --activation-checkpointing  keep each layer's input only and recompute the layer in the backward
                         pass: an eighth of the activations' memory (the 0.5B shape) for one more
                         forward pass of compute, for long sequences (the same results to the bit)`;

export const checkpointingArgs = { "activation-checkpointing": z.boolean().default(false) };

/** Applies --activation-checkpointing (on or off: a command run in-process after another) to the models made from now on. */
export async function useCheckpointing(a: { "activation-checkpointing": boolean }): Promise<void> {
  const { setActivationCheckpointing } = await import("../models/model.js");
  setActivationCheckpointing(a["activation-checkpointing"]);
}
