import { appendFileSync } from 'node:fs'
import { createAnthropic } from '@ai-sdk/anthropic'
import { warmfoldMiddleware } from '@warmfold/ai-sdk'
import type { ToolSet } from 'ai'
import { generateText, stepCountIs, wrapLanguageModel } from 'ai'

/** Headers that carry a secret: never written to the log. */
const SECRET = /authorization|api-key|cookie|token/i

/**
 * A `fetch` for any AI SDK provider that also appends each request it sends to `file`, one JSON
 * line per request, as `warmfold doctor` reads them: `{ body, url, t, headers }`.
 */
export function requestLogFetch(file: string, send: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input)
    const headers = Object.fromEntries(
      [...new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))].filter(
        ([name]) => !SECRET.test(name),
      ),
    )
    if (typeof init?.body === 'string')
      appendFileSync(file, `${JSON.stringify({ body: init.body, url, t: Date.now(), headers })}\n`)
    return send(input, init)
  }
}

export async function main(tools: ToolSet, log: string, baseURL?: string) {
  const anthropic = createAnthropic({
    apiKey: process.env.ANTHROPIC_API_KEY!,
    ...(baseURL ? { baseURL } : {}),
    fetch: requestLogFetch(log),
  })
  const model = wrapLanguageModel({
    model: anthropic('claude-sonnet-4-6'),
    middleware: warmfoldMiddleware({ contextWindow: 200_000 }),
  })
  const result = await generateText({
    model,
    system: 'You are a coding agent.',
    prompt: 'Fix the failing test.',
    tools,
    stopWhen: stepCountIs(100),
  })
  return result.text
}
