/**
 * The table as the social-world-model project's script prints it. The reference numbers come from
 * Python 3 and numpy 2.4 (`f"{x:.3f}"`, `np.mean`), run on the same inputs.
 */
import { describe, expect, it } from "vitest";
import { fmt3, npMean, renderTable } from "../../benchmarks/context-eval/table.js";

describe("context evaluation table", () => {
  it("formats as Python's .3f: ties to even on the double's exact value", () => {
    const cases: [number, string][] = [
      [0.0625, "0.062"],
      [0.1875, "0.188"],
      [0.5625, "0.562"],
      [0.8125, "0.812"],
      [0.9375, "0.938"],
      [1 / 3, "0.333"],
      [2 / 3, "0.667"],
      [0.0005, "0.001"],
      [0.9000000000000001, "0.900"],
      [1, "1.000"],
      [0, "0.000"],
    ];
    for (const [x, s] of cases) expect(fmt3(x), String(x)).toBe(s);
    // toFixed alone rounds the ties up.
    expect((0.0625).toFixed(3)).toBe("0.063");
  });

  it("averages as np.mean does (pairwise summation)", () => {
    const xs = (n: number) => Array.from({ length: n }, (_, i) => ((i * 0.37) % 1) * 0.3 + 0.7 * ((i * 0.11) % 1));
    // np.mean(xs) for n = 50, 300, 1000; for the last two a plain running sum differs.
    expect(npMean(xs(50))).toBe(0.49199999999999994);
    expect(npMean(xs(300))).toBe(0.49499999999999983);
    expect(npMean(xs(1000))).toBe(0.4949999999999995);
    expect(xs(1000).reduce((a, b) => a + b, 0) / 1000).toBe(0.49499999999999933);
  });

  it("prints upstream's header, rows padded to 12, a mean row and a final-score row", () => {
    const table = renderTable([
      { fileId: "0", structural: 1, observation: 0.8125, overall: 0.86875 },
      { fileId: "a_long_file_name", structural: 0.7, observation: 0.5, overall: 0.56 },
    ]);
    expect(table).toBe(
      [
        "| File         | Structural | Observation Accuracy | Overall |",
        "|--------------|------------|----------------------|---------|",
        "| 0            | 1.000 | 0.812 | 0.869 |",
        "| a_long_file_name | 0.700 | 0.500 | 0.560 |",
        "| **Mean**     | 0.850 | 0.656 | 0.714 |",
        "| **Final Score** | - | - | **0.714** |",
      ].join("\n"),
    );
  });
});
