import { createUserMessage } from '@warmfold/llm'
import { PrefixCache } from '@warmfold/prefix-cache-testkit'

export function main() {
  const cache = new PrefixCache('bytes') // or 'blocks:16', 'blocks:128:1024:ttl=600', 'anthropic', 'anthropic:1h', 'deepseek'
  const request = {
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    reasoningEffort: 'max',
    messages: [createUserMessage('Hi')],
  }
  const first = cache.observe(request) // first request: nothing cached
  const again = cache.observe(request) // exact repeat
  return {
    first: first.cachedTokens, // 0
    again: again.cachedTokens, // floor(prompt characters / 4): the whole prompt
    promptChars: again.promptChars,
    divergence: again.divergence, // { part: 'none' }
  }
}
