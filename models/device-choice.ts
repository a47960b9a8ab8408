/**
 * What `--device` and `--precision` accept: the commands' flags (cli/device.ts) and the scripts
 * that pass them on to the commands (measurements/learn-demo.ts) read the same two schemas.
 * Loading this file loads no engine, so a command that never runs a policy starts as fast.
 */
import { z } from "zod";

/** Where policies run: the CPU, the GPU, or the GPU where the addon has CUDA and one is visible. */
export const DeviceChoiceSchema = z.enum(["cpu", "cuda", "auto"]);
export type DeviceChoice = z.infer<typeof DeviceChoiceSchema>;

/** How the GPU computes matrix products (models/native.ts's MatmulPrecision says what each means). */
export const MatmulPrecisionSchema = z.enum(["fp32", "tf32", "bf16"]);
