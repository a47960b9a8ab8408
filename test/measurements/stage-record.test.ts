/**
 * A stage's record read back (measurements/stage-record.ts): what a policy kept from another run
 * was trained with, as a results header says it (usersim-generation's with --reuse of an SFT it
 * did not train), by its record or "steps unknown" without one; a broken record names its file.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recordedOption, reusedTraining, stageRecord, trainStage } from "../../measurements/stage-record.js";
import { usersimSftArgs } from "../../measurements/usersim-recipe.js";
import { tempDir } from "../policy/fixtures.js";

describe("stage records read back", () => {
  it("gives a kept policy's steps and batch from its record, whichever form the record takes", async () => {
    const dir = join(tempDir("sw-stage-record-"), "sft-joint");
    mkdirSync(dir);
    // No record (an SFT trained by hand, or before the script recorded it): its steps are not known.
    expect(recordedOption(dir, "--steps")).toBeUndefined();
    expect(reusedTraining(dir)).toBe("reused, steps unknown");
    // usersim-generation's record: the stage's command line under its name.
    await trainStage(dir, { "SFT joint": usersimSftArgs("/o/base", "/o/sft-joint.jsonl", dir, 240, 1, 1) }, async () => {});
    expect(recordedOption(dir, "--steps")).toBe("240");
    expect(reusedTraining(dir)).toBe("reused, 240 steps of 8 examples (its stage record)");
    // learn-recipe's: the base's and the SFT's command lines and the data's digest.
    writeFileSync(stageRecord(dir), JSON.stringify({ base: ["model", "init", "--seed", "1"], sft: ["train", "sft", "--steps", "400", "--batch", "32"], data: "ab12" }));
    expect(reusedTraining(dir)).toBe("reused, 400 steps of 32 examples (its stage record)");
    // learn-demo's GRPO: one command line, without a batch.
    writeFileSync(stageRecord(dir), JSON.stringify(["train", "grpo", "--steps", "30"]));
    expect(reusedTraining(dir)).toBe("reused, 30 steps (its stage record)");
    writeFileSync(stageRecord(dir), JSON.stringify(["train", "grpo"]));
    expect(reusedTraining(dir)).toBe("reused, steps unknown");
  });

  it("names the record's file when it cannot be read", () => {
    const dir = tempDir("sw-stage-record-bad-");
    writeFileSync(stageRecord(dir), "{not json");
    expect(() => recordedOption(dir, "--steps")).toThrow(`${stageRecord(dir)}: not valid JSON`);
    writeFileSync(stageRecord(dir), "3");
    expect(() => recordedOption(dir, "--steps")).toThrow(`${stageRecord(dir)} (top level): expected a command line (an array of strings) or an object of them`);
  });
});
