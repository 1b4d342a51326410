/**
 * An AI SDK 6 host from the registry (`ai`, `@ai-sdk/openai-compatible`, `@ai-sdk/anthropic`)
 * with the packed `@warmfold/ai-sdk`: a 24-step tool session at a 6,000-token window against a
 * scripted 127.0.0.1 server in each wire format. Checks that folds happen, are warm, that each
 * summary request is the previous request's body plus one message, and that the loop finishes.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { FoldReport } from '@warmfold/ai-sdk'
import { compareBodies, warmfoldMiddleware } from '@warmfold/ai-sdk'
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai'

const STEPS = 24
const WINDOW = 6_000
const failures: string[] = []

function check(name: string, ok: boolean, detail = ''): void {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` (${detail})` : ''}`)
  if (!ok) failures.push(name)
}

type Wire = 'openai-compatible' | 'anthropic'

async function session(wire: Wire): Promise<void> {
  const bodies: Array<{ json: any; summary: boolean }> = []
  const seen: string[] = []
  let step = 0
  const server = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')))
    request.on('end', () => {
      const json = JSON.parse(text)
      const last = json.messages.at(-1)
      const lastText = typeof last.content === 'string' ? last.content : last.content.at(-1)?.text
      const summary =
        typeof lastText === 'string' && lastText.startsWith('You are now acting as the context compaction step')
      bodies.push({ json, summary })
      const call = !summary && step < STEPS ? { id: `call_${step}`, path: `file-${step++}.ts` } : undefined
      if (!summary && !call) step++
      const answer = summary ? `## Goal and Intent\n- read the files (summary ${bodies.length})` : 'done'
      // A prefix cache over the rendered prompt (tools, system, messages, the order providers render
      // them), not the JSON body: settings such as max_tokens are not part of what a provider caches.
      // The longest prompt prefix shared with an earlier request is read, 4 characters a token.
      const rendered = JSON.stringify([json.tools ?? [], json.system ?? '', json.messages])
      const prompt = Math.ceil(rendered.length / 4)
      let shared = 0
      for (const earlier of seen) {
        let index = 0
        while (
          index < earlier.length &&
          index < rendered.length &&
          earlier.charCodeAt(index) === rendered.charCodeAt(index)
        )
          index++
        shared = Math.max(shared, index)
      }
      seen.push(rendered)
      const cached = Math.floor(shared / 4)
      const reply =
        wire === 'anthropic'
          ? {
              id: 'msg_1',
              type: 'message',
              role: 'assistant',
              model: json.model,
              stop_reason: call ? 'tool_use' : 'end_turn',
              stop_sequence: null,
              content: call
                ? [{ type: 'tool_use', id: call.id, name: 'read_file', input: { path: call.path } }]
                : [{ type: 'text', text: answer }],
              usage: {
                input_tokens: prompt - cached,
                cache_read_input_tokens: cached,
                cache_creation_input_tokens: 0,
                output_tokens: 10,
              },
            }
          : {
              id: 'c1',
              object: 'chat.completion',
              created: 1,
              model: json.model,
              choices: [
                {
                  index: 0,
                  finish_reason: call ? 'tool_calls' : 'stop',
                  message: {
                    role: 'assistant',
                    content: call ? null : answer,
                    ...(call
                      ? {
                          tool_calls: [
                            {
                              id: call.id,
                              type: 'function',
                              function: { name: 'read_file', arguments: JSON.stringify({ path: call.path }) },
                            },
                          ],
                        }
                      : {}),
                  },
                },
              ],
              usage: {
                prompt_tokens: prompt,
                completion_tokens: 10,
                total_tokens: prompt + 10,
                prompt_tokens_details: { cached_tokens: cached },
              },
            }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  try {
    const inner =
      wire === 'anthropic'
        ? createAnthropic({ baseURL, apiKey: 'key' })('claude-consumer')
        : createOpenAICompatible({ name: 'consumer', baseURL, apiKey: 'key' }).chatModel('consumer-model')
    const folds: FoldReport[] = []
    const model = wrapLanguageModel({
      model: inner,
      middleware: warmfoldMiddleware({ contextWindow: WINDOW, onFold: (fold) => folds.push(fold) }),
    })
    const readFile = tool({
      description: 'Read a file',
      inputSchema: jsonSchema<{ path: string }>({
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
      }),
      execute: async ({ path }) => `// ${path}\n${'export const line = 1\n'.repeat(60)}`,
    })
    const result = await generateText({
      model,
      system: 'You are a coding agent.',
      prompt: 'Read the files.',
      tools: { read_file: readFile },
      stopWhen: stepCountIs(STEPS + 5),
      maxOutputTokens: 512,
    })
    check(`${wire}: the tool loop finishes`, result.text === 'done', JSON.stringify(result.text))
    check(
      `${wire}: folds happened and every one is warm`,
      folds.length > 0 && folds.every((fold) => fold.committed && fold.warm),
      `${folds.length} folds`,
    )
    const summaries = bodies.flatMap((body, index) => (body.summary ? [index] : []))
    check(
      `${wire}: each summary request is the previous body plus one instruction`,
      summaries.length === folds.length &&
        summaries.every((index) => index > 0 && compareBodies(bodies[index - 1]!.json, bodies[index]!.json).replay),
      `${summaries.length} summary requests`,
    )
  } finally {
    server.close()
  }
}

await session('openai-compatible')
await session('anthropic')
if (failures.length) {
  console.log(`ai-sdk host: ${failures.length} check(s) failed: ${failures.join('; ')}`)
  process.exitCode = 1
}
