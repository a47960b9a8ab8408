/** The --lora option of `train sft` and `train grpo`: its text as LoRA settings. */
import { parseLoraOption, type LoraSettings } from "../models/lora-settings.js";
import { UsageError } from "./args.js";

/** --lora's text as settings (undefined when not given); a usage error naming what is wrong. */
export function loraArg(text: string | undefined): LoraSettings | undefined {
  if (text === undefined) return undefined;
  try {
    return parseLoraOption(text);
  } catch (err) {
    throw new UsageError(`--lora: ${(err as Error).message}`);
  }
}
