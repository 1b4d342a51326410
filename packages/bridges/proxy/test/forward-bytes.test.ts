import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AnswerFixture } from './forward-answers.ts'
import * as answers from './forward-answers.ts'
import { answerOf, fixtureFor } from './forward-answers.ts'
import type { ProxyHarness } from './forward-harness.ts'
import { comparableHeaders, startHarness } from './forward-harness.ts'

const KEY = 'sk-test-secret-key-0123456789'

interface SdkCase {
  readonly name: string
  readonly fixture: AnswerFixture
  /** Makes the call against `origin` (the scripted upstream's or the proxy's) and returns the text it read. */
  readonly call: (origin: string) => Promise<string>
}

const openai = (origin: string) => new OpenAI({ apiKey: KEY, baseURL: `${origin}/v1`, maxRetries: 0 })
const anthropic = (origin: string) => new Anthropic({ apiKey: KEY, baseURL: origin, maxRetries: 0 })
const gemini = (origin: string) => new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: origin } })
const messages = [{ role: 'user' as const, content: 'Say hello. Ünïcödé and "quotes" stay as sent.' }]

const CASES: readonly SdkCase[] = [
  {
    name: 'openai chat.completions',
    fixture: answers.chatJson,
    call: async (origin) =>
      (await openai(origin).chat.completions.create({ model: 'gpt-test', messages, temperature: 0.5 })).choices[0]
        ?.message.content ?? '',
  },
  {
    name: 'openai chat.completions streamed with usage',
    fixture: answers.chatStream,
    call: async (origin) => {
      const stream = await openai(origin).chat.completions.create({
        model: 'gpt-test',
        messages,
        stream: true,
        stream_options: { include_usage: true },
      })
      let text = ''
      for await (const part of stream) text += part.choices[0]?.delta.content ?? ''
      return text
    },
  },
  {
    name: 'openai responses',
    fixture: answers.responsesJson,
    call: async (origin) => (await openai(origin).responses.create({ model: 'gpt-test', input: messages })).output_text,
  },
  {
    name: 'openai responses streamed',
    fixture: answers.responsesStream,
    call: async (origin) => {
      const stream = await openai(origin).responses.create({ model: 'gpt-test', input: messages, stream: true })
      let text = ''
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta
      return text
    },
  },
  {
    name: 'anthropic messages',
    fixture: answers.anthropicJson,
    call: async (origin) => {
      const message = await anthropic(origin).messages.create({ model: 'claude-test', max_tokens: 64, messages })
      return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
    },
  },
  {
    name: 'anthropic messages streamed',
    fixture: answers.anthropicStream,
    call: async (origin) => {
      const stream = await anthropic(origin).messages.create({
        model: 'claude-test',
        max_tokens: 64,
        messages,
        stream: true,
      })
      let text = ''
      for await (const event of stream)
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text
      return text
    },
  },
  {
    name: 'anthropic messages.countTokens',
    fixture: answers.anthropicCount,
    call: async (origin) =>
      String((await anthropic(origin).messages.countTokens({ model: 'claude-test', messages })).input_tokens),
  },
  {
    name: 'google genai generateContent',
    fixture: answers.geminiJson,
    call: async (origin) =>
      (await gemini(origin).models.generateContent({ model: 'gemini-test', contents: 'Say hello.' })).text ?? '',
  },
  {
    name: 'google genai generateContentStream',
    fixture: answers.geminiStream,
    call: async (origin) => {
      const stream = await gemini(origin).models.generateContentStream({ model: 'gemini-test', contents: 'Say hello.' })
      let text = ''
      for await (const part of stream) text += part.text ?? ''
      return text
    },
  },
  {
    name: 'google genai countTokens',
    fixture: answers.geminiCount,
    call: async (origin) =>
      String((await gemini(origin).models.countTokens({ model: 'gemini-test', contents: 'Say hello.' })).totalTokens),
  },
]

const EXPECTED_TEXT: ReadonlyMap<AnswerFixture, string> = new Map([
  [answers.anthropicCount, '42'],
  [answers.geminiCount, '42'],
])

describe('forwarding byte for byte, with the official SDKs', () => {
  let harness: ProxyHarness
  beforeAll(async () => {
    harness = await startHarness((request) => answerOf(fixtureFor(request)))
  })
  afterAll(async () => harness.close())

  for (const sdkCase of CASES) {
    it(`${sdkCase.name}: the upstream gets the same body and headers, the client the same bytes`, async () => {
      const { upstream } = harness
      const direct = upstream.requests.length
      const seen = harness.exchanges.length
      expect(await sdkCase.call(upstream.url)).toBe(EXPECTED_TEXT.get(sdkCase.fixture) ?? 'Hello')
      const proxied = upstream.requests.length
      expect(await sdkCase.call(harness.url)).toBe(EXPECTED_TEXT.get(sdkCase.fixture) ?? 'Hello')
      const [sentDirect, sentProxied] = [upstream.requests[direct], upstream.requests[proxied]]
      if (!sentDirect || !sentProxied) throw new Error('the upstream did not get both requests')
      expect(fixtureFor(sentProxied)).toBe(sdkCase.fixture)
      expect(sentProxied.method).toBe(sentDirect.method)
      expect(sentProxied.url).toBe(sentDirect.url)
      expect(sentProxied.body.equals(sentDirect.body)).toBe(true)
      expect(comparableHeaders(sentProxied.rawHeaders)).toEqual(comparableHeaders(sentDirect.rawHeaders))
      expect(sentProxied.rawHeaders.some((value) => value === KEY || value.includes(KEY))).toBe(true)

      // The answer's bytes, read raw (no SDK): what the upstream sent, unchanged.
      const headers: [string, string][] = []
      for (let index = 0; index + 1 < sentDirect.rawHeaders.length; index += 2) {
        const name = sentDirect.rawHeaders[index] as string
        if (!/^(host|connection|content-length)$/i.test(name))
          headers.push([name, sentDirect.rawHeaders[index + 1] as string])
      }
      const raw = await fetch(`${harness.url}${sentDirect.url}`, { method: 'POST', headers, body: sentDirect.body })
      const received = Buffer.from(await raw.arrayBuffer())
      expect(received.equals(upstream.answerBytes(upstream.requests.length - 1))).toBe(true)
      expect(received.toString('utf8')).toBe(sdkCase.fixture.parts.join(''))
      expect(raw.headers.get('content-type')).toBe(
        sdkCase.fixture.streamed ? 'text/event-stream; charset=utf-8' : 'application/json',
      )

      // What the proxy read from the answer on its way through.
      // The SDK's call and the raw one, each handed to the observer after its answer ended.
      await harness.observed(seen + 2)
      const [exchange, replayed] = harness.exchanges.slice(seen)
      expect(exchange?.request.body.equals(sentProxied.body)).toBe(true)
      expect(exchange?.request.url).toBe(sentProxied.url)
      expect(replayed?.answer.usage).toEqual(exchange?.answer.usage)
      expect(exchange?.answer).toMatchObject({ status: 200, streamed: sdkCase.fixture.streamed })
      expect(exchange?.answer.usage).toEqual(sdkCase.fixture.usage)
      expect(exchange?.answer.responseId).toBe(sdkCase.fixture.responseId)
      expect(exchange?.answer.providerDiagnosis).toBe(sdkCase.fixture.providerDiagnosis)
      expect(exchange?.answer.unreadable).toBeUndefined()
      expect(exchange?.answer.firstByteMs).toBeTypeOf('number')
      expect(exchange?.answer.totalMs).toBeGreaterThanOrEqual(exchange?.answer.firstByteMs ?? Number.NaN)
    })
  }
})
