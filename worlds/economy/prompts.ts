/**
 * The words of the economy: what a household is told each month (after EconAgent's prompt:
 * its job and wage, last month's consumption, taxes and redistribution, the price, its savings
 * and the interest rate, then the request for a JSON decision), the month's public summary
 * (the socialized context's state), and decisions as the context writes them.
 */
import type { HouseholdDecision } from "./action.js";
import type { HouseholdObservation, PublicStats } from "./observation.js";
import { describeBrackets } from "./taxes.js";

// One formatter for every amount: Number.prototype.toLocaleString builds a new one per call, which
// made rendering a household's prompt take half a millisecond.
const dollars = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const money = (x: number) => `$${dollars.format(x)}`;
const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
const signedPct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(2)}%`;

/** The request that ends every household prompt: the exact schema, nothing else. */
export const DECISION_REQUEST =
  "Considering your living costs, your future and the economy, how willing are you to work this month, and what share of your savings and income will you spend on essential goods? " +
  'Answer with JSON only, exactly two keys: {"work": w, "consumption": c}, where w is your propensity to work and c the share of all your money to spend this month, both numbers between 0 and 1.';

/** A household's monthly prompt. */
export function renderObservation(o: HouseholdObservation): string {
  const f = o.finances;
  const e = o.economy;
  const lines: string[] = [];
  lines.push(
    `You are ${o.household}, one of ${e.households} households in a simulated economy. Each month you choose how willing you are to work and what share of your money to spend on essential goods. ` +
      `Your income is taxed in brackets (income within each bracket is taxed at that bracket's rate: ${describeBrackets({ cutoffs: e.bracketCutoffs, rates: e.bracketRates })}), ` +
      "and the government pays all the tax it collects back to every household in equal shares.",
  );
  lines.push(`It is month ${e.month} (month ${e.monthOfYear} of year ${e.year}).`);
  if (f.worked === null || f.previousWageOffer === null) {
    lines.push(`You have a job offer: working this month pays ${money(f.wageOffer)} before tax.`);
  } else {
    const trend =
      f.wageOffer > f.previousWageOffer ? "up from" : f.wageOffer < f.previousWageOffer ? "down from" : "the same as";
    lines.push(
      (f.worked ? `Last month you worked and earned ${money(f.income)} before tax. ` : "Last month you did not work and had no income from work. ") +
        `Working this month pays ${money(f.wageOffer)}, ${trend} ${money(f.previousWageOffer)} last month.`,
    );
    lines.push(
      f.shortage
        ? `Last month the shops ran out of goods before you could buy all you wanted; you spent ${money(f.spent)}.`
        : `Last month you spent ${money(f.spent)} on essential goods.`,
    );
    lines.push(`You paid ${money(f.taxPaid)} in tax and received ${money(f.lumpSum)} from the redistribution.`);
  }
  lines.push(priceLine(e));
  lines.push(`Your savings are ${money(f.savings)}. The bank pays ${pct(e.rate)} interest a year, credited at the end of the year.`);
  const stats = publicLine(e);
  if (stats) lines.push(stats);
  lines.push(DECISION_REQUEST);
  return lines.join("\n");
}

function priceLine(e: PublicStats): string {
  if (e.previousPrice === null) return `Essential goods cost ${money(e.price)} each.`;
  const change = e.price / e.previousPrice - 1;
  const word = change > 0 ? "risen" : change < 0 ? "fallen" : "stayed";
  return change === 0 ? `Essential goods still cost ${money(e.price)} each.` : `The price of essential goods has ${word} to ${money(e.price)} (${signedPct(change)} on last month).`;
}

function publicLine(e: PublicStats): string {
  const parts: string[] = [];
  if (e.unemployment !== null) parts.push(`${pct(e.unemployment)} of households did not work last month`);
  const y = e.lastYear;
  if (y) {
    const bits = [`unemployment ${pct(y.unemployment)}`];
    if (y.inflation !== null) bits.push(`inflation ${signedPct(y.inflation)}`);
    if (y.wageInflation !== null) bits.push(`wage growth ${signedPct(y.wageInflation)}`);
    parts.push(`in year ${y.year}: ${bits.join(", ")}`);
  }
  return parts.length ? `Public statistics: ${parts.join("; ")}.` : "";
}

/** The socialized context's state: the month's public picture (the firm's stock when known). */
export function describeEconomy(e: PublicStats, inventory: number | null): string {
  const bits = [`month ${e.month} (year ${e.year})`, `price ${money(e.price)}`, `interest rate ${pct(e.rate)}`];
  if (e.unemployment !== null) bits.push(`unemployment last month ${pct(e.unemployment)}`);
  if (e.lastYear?.inflation !== undefined && e.lastYear.inflation !== null) bits.push(`inflation in year ${e.lastYear.year} ${signedPct(e.lastYear.inflation)}`);
  if (inventory !== null) bits.push(`goods in stock ${inventory.toFixed(0)}`);
  return `Economy: ${bits.join(", ")}.`;
}

export function renderDecision(d: HouseholdDecision): string {
  return `decides to work with propensity ${d.work.toFixed(2)} and to spend ${d.consumption.toFixed(2)} of its money`;
}
