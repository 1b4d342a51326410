import type { RecordedRequest, Reply } from '@warmfold/test-utils'
import { RecordingServer } from '@warmfold/test-utils'

/** Prompt usage as a byte-prefix cache would report it, in tokens of 4 characters. */
export interface PrefixUsage {
  /** Tokens of the whole prompt. */
  readonly prompt: number
  /** Tokens that repeat the longest earlier body's prefix. */
  readonly cached: number
  /** Tokens past that prefix (what a breakpoint cache would write). */
  readonly uncached: number
}

/**
 * A 127.0.0.1 endpoint with a byte-prefix cache: every request's cached tokens are the longest
 * prefix its raw body shares with any earlier body (4 characters a token), and `reply` answers
 * in the wire format under test. The workload's requests differ only in what they append or
 * rewrite, so the shared bytes are the cacheable prefix.
 */
export async function startPrefixCacheEndpoint(
  reply: (usage: PrefixUsage, request: RecordedRequest) => Reply,
): Promise<RecordingServer & { usages: PrefixUsage[] }> {
  const usages: PrefixUsage[] = []
  const server = await RecordingServer.start((request, index) => {
    let shared = 0
    for (const earlier of server.requests.slice(0, index))
      shared = Math.max(shared, commonPrefix(earlier.body, request.body))
    const prompt = Math.ceil(request.body.length / 4)
    const cached = Math.min(prompt, Math.floor(shared / 4))
    const usage = { prompt, cached, uncached: prompt - cached }
    usages.push(usage)
    return reply(usage, request)
  })
  return Object.assign(server, { usages })
}

function commonPrefix(left: string, right: string): number {
  let index = 0
  while (index < left.length && index < right.length && left[index] === right[index]) index++
  return index
}
