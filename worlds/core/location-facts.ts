/**
 * The fact vocabulary of worlds where objects sit in containers (ToMi, Hi-ToM): a fact is "the X
 * is in the C". A text states it when one of its sentences names the object and the container
 * (the world's own sentences do; so do "I'll look in the green box, where the apple is now" and a
 * model's JSON action). Only the world's grammar decides what makes a fact true: a move, or the
 * narrator or an entrance showing where the object is; a claim names a place without putting the
 * object there. Names are the world's (its layout), or those its story's sentences use.
 */
import { escapeRegExp } from "./escape-reg-exp.js";
import { sentencesOf, type Fact, type FactVocabulary } from "./leak-audit.js";

export interface LocationGrammar {
  /** The object and container a sentence of the world's state makes true, if any. */
  truth(sentence: string): { readonly object: string; readonly container: string } | undefined;
  /** The objects and containers a sentence of the world's state names (how names are learned from a log). */
  names(sentence: string): { readonly objects: readonly string[]; readonly containers: readonly string[] };
}

export function locationFact(object: string, container: string): Fact {
  return { id: `${object}@${container}`, text: `the ${object} is in the ${container}` };
}

interface Name {
  readonly name: string;
  readonly kind: "object" | "container";
  readonly re: RegExp;
}

export class LocationFacts implements FactVocabulary {
  private readonly names: readonly Name[];
  private readonly containers: readonly string[];

  constructor(
    objects: Iterable<string>,
    containers: Iterable<string>,
    private readonly grammar: LocationGrammar,
    private readonly structured?: (action: unknown) => readonly Fact[],
  ) {
    const objs = [...new Set(objects)];
    const cons = [...new Set(containers)].filter((c) => !objs.includes(c));
    this.containers = cons;
    // Longest names first, so "green_box" is read before a "box" inside it.
    this.names = [...objs.map((n) => ({ n, kind: "object" as const })), ...cons.map((n) => ({ n, kind: "container" as const }))]
      .sort((a, b) => b.n.length - a.n.length)
      .map(({ n, kind }) => ({ name: n, kind, re: nameRegExp(n) }));
  }

  /** The vocabulary of one episode: the layout's names when known, and every name its world text uses. */
  static of(grammar: LocationGrammar, stateTexts: Iterable<string>, layout?: { objects: readonly string[]; containers: readonly string[] }, structured?: (action: unknown) => readonly Fact[]): LocationFacts {
    const objects = new Set(layout?.objects ?? []);
    const containers = new Set(layout?.containers ?? []);
    for (const text of stateTexts) {
      for (const sentence of sentencesOf(text)) {
        const n = grammar.names(sentence);
        for (const o of n.objects) objects.add(o);
        for (const c of n.containers) containers.add(c);
      }
    }
    return new LocationFacts(objects, containers, grammar, structured);
  }

  facts(text: string): Fact[] {
    const out = new Map<string, Fact>();
    for (const sentence of sentencesOf(text)) {
      const taken: [number, number][] = [];
      const found = { object: [] as string[], container: [] as string[] };
      for (const n of this.names) {
        n.re.lastIndex = 0;
        for (let m = n.re.exec(sentence); m; m = n.re.exec(sentence)) {
          const span: [number, number] = [m.index, m.index + m[0].length];
          if (taken.some(([a, b]) => span[0] < b && a < span[1])) continue;
          taken.push(span);
          if (!found[n.kind].includes(n.name)) found[n.kind].push(n.name);
        }
      }
      for (const o of found.object) for (const c of found.container) out.set(`${o}@${c}`, locationFact(o, c));
    }
    return [...out.values()];
  }

  update(sentence: string): { begin: Fact[]; end: string[] } {
    const t = this.grammar.truth(sentence);
    if (!t) return { begin: [], end: [] };
    return { begin: [locationFact(t.object, t.container)], end: this.containers.filter((c) => c !== t.container).map((c) => `${t.object}@${c}`) };
  }

  stated(action: unknown): readonly Fact[] {
    return this.structured?.(action) ?? [];
  }
}

/** A name as text writes it: any case, "_" or a space between its words, whole words only. */
function nameRegExp(name: string): RegExp {
  const words = name.split(/[_\s]+/).map(escapeRegExp);
  return new RegExp(`(?<![A-Za-z0-9_])${words.join("[_ ]")}(?![A-Za-z0-9_])`, "gi");
}
