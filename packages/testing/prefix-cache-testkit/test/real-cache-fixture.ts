import type { LlamaCacheServer } from '@warmfold/llama-cache-server'
import { startLlamaCacheServer } from '@warmfold/llama-cache-server'
import { createUserMessage } from '@warmfold/llm'
import { afterAll, beforeAll } from 'vitest'
import type { CacheObservation, ProbedWorkloadRun } from '../src/index.ts'
import { CacheProbe } from '../src/index.ts'

// Shared by the default real-cache case (`real-cache.test.ts`) and the full proof
// (`real-cache-proof.test.ts`, `pnpm test:real-cache`): a real llama.cpp KV cache (node-llama-cpp,
// tiny generated GGUF, 2 threads). Small windows keep every prefill short on a 2-core machine;
// cached counts come from the engine, not a model.

/** The workload's smallest window: its first fold lands after about 16 steps. */
export const WINDOW = 4800
/** Tokens a template may re-render at a request boundary (the generation prompt). */
export const SLACK = 8

/** Starts one embedded server for the calling file's tests and closes it after them. */
export function useLlamaCacheServer(contextSize = 32768): { readonly server: LlamaCacheServer; probe(): CacheProbe } {
  let server: LlamaCacheServer | undefined
  beforeAll(async () => {
    server = await startLlamaCacheServer({ contextSize })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })
  const running = (): LlamaCacheServer => {
    if (!server) throw new Error('the llama cache server is not started: use it inside a test')
    return server
  }
  return {
    get server() {
      return running()
    },
    probe: () => new CacheProbe({ baseURL: running().baseURL }),
  }
}

/** Conversation requests that did not reuse the whole previous request (logged rewrites ignored). */
export function shortfalls(run: ProbedWorkloadRun, onlyUnexplained: boolean): CacheObservation[] {
  const conversation = run.conversation
  return conversation.filter((observation, index) => {
    if (index === 0 || (onlyUnexplained && observation.rewritesSince.length > 0)) return false
    return observation.cachedTokens < (conversation[index - 1] as CacheObservation).promptTokens - SLACK
  })
}

/** Prompt tokens the server behind `probe` counts for `text` as one more user message. */
export async function userMessageTokens(probe: CacheProbe, text: string): Promise<number> {
  const base = { provider: 'x', model: 'x', purpose: 'measure', messages: [createUserMessage('start')] }
  const without = await probe.probe(base)
  const withText = await probe.probe({ ...base, messages: [...base.messages, createUserMessage(text)] })
  return withText.promptTokens - without.promptTokens
}
