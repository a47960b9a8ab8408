import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SASREC_DEFAULTS } from "../../trainers/rec/sasrec.js";
import { BPR_DEFAULTS, HISTORY_SHOWN, PREVIEW, RecGeneratorOptionsSchema } from "../../worlds/rec/index.js";

const page = readFileSync(new URL("../../docs/recommendation.md", import.meta.url), "utf8").replace(/\s+/g, " ");

describe("the recommendation world's docs page", () => {
  it("gives the generator's defaults as the schema has them", () => {
    const d = RecGeneratorOptionsSchema.parse({ users: 1 });
    expect(page).toContain(`Defaults: ${d.items} items, ${d.dim} dimensions, mean length ${d.meanLength}, beta ${d.beta}, gamma ${d.gamma}, bias standard deviation ${d.popularity}.`);
  });

  it("gives BPR's defaults and the observation's sizes as the code has them", () => {
    expect(page).toContain(`\`--dim ${BPR_DEFAULTS.dim} --epochs ${BPR_DEFAULTS.epochs} --lr ${BPR_DEFAULTS.lr}\`, reg ${BPR_DEFAULTS.reg}`);
    expect(page).toContain(`the user's last ${HISTORY_SHOWN} films`);
    const s = SASREC_DEFAULTS;
    expect(page).toContain(`\`--sasrec-dim ${s.dim} --sasrec-epochs ${s.epochs}\`, ${s.layers} layers, ${s.heads} heads, the last ${s.maxLen} items, batch ${s.batch}, lr ${s.lr}`);
    expect(page).toContain(`(${["", "one", "two", "three", "four", "five"][PREVIEW]} titles each)`);
  });
});
