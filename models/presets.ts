/**
 * Architectures for models trained from scratch. The vocabulary is the tokenizer's (built from a
 * corpus up to `vocab` tokens), so a preset's exact parameter count depends on it.
 */
export interface Preset {
  readonly description: string;
  readonly hiddenSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly intermediateSize: number;
  readonly maxPositionEmbeddings: number;
  /** Upper bound on the tokenizer's vocabulary. */
  readonly vocab: number;
  readonly tieWordEmbeddings: boolean;
  readonly ropeTheta: number;
}

export const PRESETS: Readonly<Record<string, Preset>> = {
  tiny: {
    description: "about 0.1M parameters: for tests",
    hiddenSize: 64,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    intermediateSize: 128,
    maxPositionEmbeddings: 512,
    vocab: 512,
    tieWordEmbeddings: true,
    ropeTheta: 10000,
  },
  "10m": {
    description: "about 10M parameters (9.5M in the blocks): a small policy trained from scratch",
    hiddenSize: 256,
    numLayers: 12,
    numHeads: 4,
    numKvHeads: 2,
    intermediateSize: 768,
    maxPositionEmbeddings: 1024,
    vocab: 4096,
    tieWordEmbeddings: true,
    ropeTheta: 10000,
  },
  "1m": {
    description: "about 1M parameters (0.8M in the blocks): a policy that trains in minutes on two cores",
    hiddenSize: 128,
    numLayers: 4,
    numHeads: 4,
    numKvHeads: 2,
    intermediateSize: 384,
    maxPositionEmbeddings: 1024,
    vocab: 4096,
    tieWordEmbeddings: true,
    ropeTheta: 10000,
  },
  "200k": {
    description: "about 0.25M parameters with a 1,024-token context: a policy for long prompts (the economy's household, ~500 tokens) on a loaded CPU",
    hiddenSize: 64,
    numLayers: 4,
    numHeads: 4,
    numKvHeads: 2,
    intermediateSize: 192,
    maxPositionEmbeddings: 1024,
    vocab: 1024,
    tieWordEmbeddings: true,
    ropeTheta: 10000,
  },
};

export function preset(name: string): Preset {
  const p = PRESETS[name];
  if (!p) throw new Error(`unknown preset "${name}" (known: ${Object.keys(PRESETS).join(", ")})`);
  return p;
}
