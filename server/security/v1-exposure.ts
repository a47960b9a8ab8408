/**
 * Whether /v1 (the policies' OpenAI-compatible API) may run without an API key. On a loopback
 * address only this machine reaches it; on any other address anyone who can reach the port could
 * spend the machine's CPU generating text, so the server refuses to start without a key unless
 * it is told, in so many words, to serve /v1 open (and then says so loudly at start).
 */
import { ConfigError } from "../config.js";
import { isLoopbackHost } from "./client-address.js";

export type V1Exposure = "loopback" | "key" | "open";

export function v1Exposure(host: string, apiKey: string | undefined, openV1: boolean, flag = "--open-v1"): V1Exposure {
  if (apiKey) return "key";
  if (isLoopbackHost(host)) return "loopback";
  if (openV1) return "open";
  throw new ConfigError(
    `${host} is not a loopback address: /v1 (the policies' OpenAI-compatible API) needs a key there: --api-key K (or $SOCIALWORLD_OPENAI_API_KEY), or ${flag} to serve it to anyone who can reach the port`,
  );
}

/** The line printed at start when /v1 is open to the network. */
export function openV1Warning(host: string): string {
  return `WARNING: /v1 is open: anyone who can reach ${host} may generate text with the served policies, without a key (--api-key K closes it)`;
}
