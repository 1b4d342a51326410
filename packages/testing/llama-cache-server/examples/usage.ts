import { startLlamaCacheServer } from '@warmfold/llama-cache-server'

export async function main() {
  const server = await startLlamaCacheServer() // generates the tiny model into a temp dir
  try {
    // Point any OpenAI-compatible client at server.baseURL (http://127.0.0.1:<port>/v1).
    const ask = async (content: string) => {
      const response = await fetch(`${server.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content }], reasoning_effort: 'high' }),
      })
      return (await response.json()) as {
        usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } }
        timings: { prompt_n: number }
      }
    }
    const first = await ask('Why is the test failing?')
    const second = await ask('Why is the test failing? Look at src/add.ts.') // extends the first prompt
    // usage.prompt_tokens_details.cached_tokens: prompt tokens reused from the KV cache
    // timings.prompt_n: prompt tokens evaluated for this request
    return { first, second, records: [...server.records] } // records: the same numbers, one per request
  } finally {
    await server.close()
  }
}
