import { readFileSync } from 'node:fs'
import { LATENCY_PROFILES, latencyProfileFromJson, requestLatency } from '@warmfold/prefix-cache-testkit'

export function main() {
  // Your provider's figures, from a JSON file (every error names the file, the key and the value).
  const file = new URL('./latency-profile.json', import.meta.url)
  const mine = latencyProfileFromJson(JSON.parse(readFileSync(file, 'utf8')), 'latency-profile.json')
  // One summary call over a 150,000-token prefix that writes a 3,000-token checkpoint.
  const warm = { uncachedTokens: 400, cachedTokens: 150_000, outputTokens: 3000 } // the prefix read from the cache
  const cold = { uncachedTokens: 150_400, cachedTokens: 0, outputTokens: 3000 } // all of it prefilled again
  return {
    mine: { warm: requestLatency(warm, mine), cold: requestLatency(cold, mine) }, // { firstTokenMs, decodeMs, totalMs }
    sonnet: {
      warm: requestLatency(warm, LATENCY_PROFILES['sonnet-class']),
      cold: requestLatency(cold, LATENCY_PROFILES['sonnet-class']),
    },
  }
}
