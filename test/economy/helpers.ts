/** Small economies with chosen skills, for tests that compute a month by hand. */
import { economyParams, initialEconomy, type EconomyParamsInput, type EconomyState } from "../../worlds/economy/index.js";

export function economyWith(skills: readonly number[], input: EconomyParamsInput = {}, extra: { savings?: readonly number[]; price?: number } = {}): EconomyState {
  const params = economyParams({ skillBatches: 1, ...input, households: skills.length });
  const base = initialEconomy(params, 0);
  const wage = Float64Array.from(skills);
  const price = extra.price ?? base.price;
  return {
    ...base,
    households: {
      ...base.households,
      skill: wage.slice(),
      wage,
      previousWage: wage.slice(),
      savings: extra.savings ? Float64Array.from(extra.savings) : base.households.savings,
    },
    price,
    initialPrice: price,
  };
}

/** Two brackets that are easy to compute by hand: 10% up to 1000 a month, 50% above. */
export const SIMPLE_TAX: EconomyParamsInput = { bracketCutoffs: [0, 1000], bracketRates: [0.1, 0.5], hoursPerMonth: 10 };
