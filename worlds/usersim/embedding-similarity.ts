/**
 * Embedding similarity of free text for the offline judge (`bench usersim --embedder SPEC`):
 * the response, and a state whose texts are not in the vocabulary's words, scored by the cosine
 * of their sentence embeddings instead of ROUGE-L (a negative cosine counts 0, as the judge
 * clamps every score to [0, 1]). The embedders are the ones FANToM's judge uses (worlds/core:
 * `onnx:DIR`, a sentence-embedding model the user has on disk, mean-pooled over its token states
 * unless it pools itself; `lexical`, hashed words, word pairs and character trigrams, no model),
 * so one model folder serves both worlds and nothing is downloaded. The structured states are
 * scored exactly whatever the scorer.
 */
import { createEmbedder } from "../core/embedder-spec.js";
import { cosine } from "../core/embedder.js";

/** A free-text similarity in [0, 1] and the name reports give it. */
export interface FreeTextScorer {
  readonly id: string;
  score(generated: string, reference: string): number;
}

export async function embeddingSimilarity(spec: string): Promise<FreeTextScorer> {
  const embedder = await createEmbedder(spec);
  return {
    id: `cosine of ${embedder.id} sentence embeddings`,
    score(generated, reference) {
      const [g, r] = embedder.embed([generated, reference]);
      return Math.max(0, cosine(g!, r!));
    },
  };
}
