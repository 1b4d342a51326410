import { PromptRenderer } from '@warmfold/cache-ledger/prefix'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { canonicalJson, createAssistantMessage, createUserMessage, textBlock, toolCallBlock } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { PrefixCache } from '../src/index.ts'
import { familyOf } from '../src/prefix-cache.ts'
import {
  commonPrefix,
  FIRST_TEXT_OFFSET,
  letters,
  promptText,
  request,
  ROUTE,
  toolStep,
  TOOLS,
  userMessageOfChars,
} from './prefix-cache-fixture.ts'

const renderer = new PromptRenderer(canonicalJson)

/** Characters before the first segment of message `index` of `options`. */
function messageStart(options: GenerateOptions, index: number, blockIndex = 0): number {
  const layout = renderer.layout(options)
  const position = layout.segments.findIndex(
    (segment) => segment.part === 'message' && segment.index === index && segment.blockIndex === blockIndex,
  )
  return layout.offsets[position]!
}

function users(count: number, seed = 0, length = 60): Message[] {
  return Array.from({ length: count }, (_, index) => createUserMessage(letters(seed + index, length)))
}

describe('profile bytes', () => {
  it('charges the first request in full and says so', () => {
    const cache = new PrefixCache('bytes')
    const first = request(users(3), { tools: TOOLS, system: 'You are careful.' })
    const chars = promptText(first).length
    const observation = cache.observe(first)
    expect(observation).toMatchObject({
      index: 0,
      promptChars: chars,
      promptTokens: Math.ceil(chars / 4),
      cachedTokens: 0,
      uncachedTokens: Math.ceil(chars / 4),
      cacheWriteTokens: Math.ceil(chars / 4),
      matchedChars: 0,
    })
    expect(observation.divergence).toEqual({ part: 'first' })
  })

  it('caches an exact repeat in full: floor(chars / 4), the partial last token stays uncached', () => {
    const cache = new PrefixCache('bytes')
    // 5 user messages of 60 letters: pick a length whose prompt is not a multiple of 4.
    let messages = users(5)
    if (promptText(request(messages)).length % 4 === 0) messages = [...messages, createUserMessage('x')]
    const repeat = request(messages)
    const chars = promptText(repeat).length
    expect(chars % 4).not.toBe(0)
    cache.observe(repeat)
    const observation = cache.observe(request(messages))
    expect(observation.promptTokens).toBe(Math.ceil(chars / 4))
    expect(observation.cachedTokens).toBe(Math.floor(chars / 4))
    expect(observation.uncachedTokens).toBe(1)
    expect(observation.matchedChars).toBe(chars)
    expect(observation.divergence).toEqual({ part: 'none' })
  })

  it('caches the whole previous prompt of an extension and names the first new block', () => {
    const cache = new PrefixCache('bytes')
    const before = [createUserMessage('Fix the loader.'), ...toolStep(0)]
    const previous = request(before, { tools: TOOLS, system: 'sys' })
    const next = request([...before, ...toolStep(1)], { tools: TOOLS, system: 'sys' })
    const previousChars = promptText(previous).length
    cache.observe(previous)
    const observation = cache.observe(next)
    expect(observation.matchedChars).toBe(previousChars)
    expect(observation.cachedTokens).toBe(Math.floor(previousChars / 4))
    expect(observation.promptTokens).toBe(Math.ceil(promptText(next).length / 4))
    expect(observation.divergence).toEqual({ part: 'message', index: 3, blockIndex: 0, offset: previousChars })
  })

  it('caches up to the changed character of message i (a partial segment match counts)', () => {
    const cache = new PrefixCache('bytes')
    const original = users(4)
    const changedText = `${letters(2, 60).slice(0, 25)}#${letters(2, 60).slice(26)}`
    const edited = [original[0]!, original[1]!, createUserMessage(changedText), original[3]!]
    cache.observe(request(original, { system: 'sys' }))
    const next = request(edited, { system: 'sys' })
    const observation = cache.observe(next)
    const expected = messageStart(next, 2) + FIRST_TEXT_OFFSET + 25
    expect(expected).toBe(commonPrefix(promptText(next), promptText(request(original, { system: 'sys' }))))
    expect(observation.matchedChars).toBe(expected)
    expect(observation.cachedTokens).toBe(Math.floor(expected / 4))
    expect(observation.uncachedTokens).toBe(Math.ceil(promptText(next).length / 4) - Math.floor(expected / 4))
    expect(observation.divergence).toEqual({ part: 'message', index: 2, blockIndex: 0, offset: expected })
  })

  it('names the block index when a later block of a message changes', () => {
    const cache = new PrefixCache('bytes')
    const first = [
      createUserMessage('go'),
      createAssistantMessage([textBlock('reading'), toolCallBlock('c1', 'read_file', '{"path":"a.ts"}')], ROUTE),
    ]
    const second = [
      createUserMessage('go'),
      createAssistantMessage([textBlock('reading'), toolCallBlock('c1', 'read_file', '{"path":"b.ts"}')], ROUTE),
    ]
    cache.observe(request(first))
    const next = request(second)
    const observation = cache.observe(next)
    const expected = messageStart(next, 1, 1) + '{"block":{"arguments":"{\\"path\\":\\"'.length
    expect(expected).toBe(commonPrefix(promptText(next), promptText(request(first))))
    expect(observation.divergence).toEqual({ part: 'message', index: 1, blockIndex: 1, offset: expected })
    expect(observation.cachedTokens).toBe(Math.floor(expected / 4))
  })

  it('names a changed tool by index, and a changed system prompt', () => {
    const cache = new PrefixCache('bytes')
    const messages = users(2)
    const base = request(messages, { tools: TOOLS, system: 'You are careful.' })
    cache.observe(base)

    const tools = [TOOLS[0]!, { ...TOOLS[1]!, description: 'Run the unit tests.' }, TOOLS[2]!]
    const toolChange = request(messages, { tools, system: 'You are careful.' })
    const toolsObservation = cache.observe(toolChange)
    const toolOffset = commonPrefix(promptText(toolChange), promptText(base))
    const secondTool = renderer.layout(toolChange).offsets[1]!
    expect(toolOffset).toBeGreaterThan(secondTool)
    expect(toolsObservation.divergence).toStrictEqual({ part: 'tools', index: 1, offset: toolOffset })
    expect(toolsObservation.cachedTokens).toBe(Math.floor(toolOffset / 4))

    const systemChange = request(messages, { tools: TOOLS, system: 'You are brave.' })
    const systemObservation = cache.observe(systemChange)
    const systemOffset = commonPrefix(promptText(systemChange), promptText(base))
    expect(systemOffset).toBe(renderer.layout(systemChange).offsets[3]! + '{"system":"You are '.length)
    expect(systemObservation.divergence).toStrictEqual({ part: 'system', index: 0, offset: systemOffset })
  })

  it('matches the best of ALL earlier requests of the family, not just the last', () => {
    const cache = new PrefixCache('bytes')
    const long = users(6)
    cache.observe(request(long))
    // A request that shares only message 0 comes in between.
    cache.observe(request([long[0]!, createUserMessage('something else entirely')]))
    const extended = request([...long, createUserMessage('next')])
    const observation = cache.observe(extended)
    const longChars = promptText(request(long)).length
    expect(observation.matchedChars).toBe(longChars)
    expect(observation.cachedTokens).toBe(Math.floor(longChars / 4))
    expect(observation.divergence).toEqual({ part: 'message', index: 6, blockIndex: 0, offset: longChars })
  })

  it('takes the longest partial match among every earlier continuation', () => {
    const cache = new PrefixCache('bytes')
    const head = createUserMessage('same start')
    cache.observe(request([head, createUserMessage('abcdefghij-first')]))
    cache.observe(request([head, createUserMessage('abcXYZ-second')]))
    const next = request([head, createUserMessage('abcdefghij!third')])
    const observation = cache.observe(next)
    const expected = messageStart(next, 1) + FIRST_TEXT_OFFSET + 'abcdefghij'.length
    expect(observation.matchedChars).toBe(expected)
    expect(observation.divergence).toEqual({ part: 'message', index: 1, blockIndex: 0, offset: expected })
  })

  it('treats a shorter request that is a prefix of an earlier one as fully cached', () => {
    const cache = new PrefixCache('bytes')
    const long = users(5)
    cache.observe(request(long))
    const shorter = request(long.slice(0, 3))
    const observation = cache.observe(shorter)
    expect(observation.cachedTokens).toBe(Math.floor(promptText(shorter).length / 4))
    expect(observation.divergence).toEqual({ part: 'none' })
  })

  it.each([
    ['provider', { provider: 'other' }],
    ['model', { model: 'other' }],
    ['reasoningEffort', { reasoningEffort: 'low' }],
    ['temperature', { temperature: 0.7 }],
    ['stop', { stop: ['</done>'] }],
  ] as const)(
    'puts a request with another %s in another family: nothing cached, divergence names the field',
    (field, change) => {
      const cache = new PrefixCache('bytes')
      const messages = users(4)
      const envelope = { reasoningEffort: 'high', temperature: 0.2, stop: ['</answer>'] }
      const first = cache.observe(request(messages, envelope))
      const other = cache.observe(request(messages, { ...envelope, ...change }))
      expect(other.family).not.toBe(first.family)
      expect(other.family).toBe(familyOf(request(messages, { ...envelope, ...change })))
      expect(other.cachedTokens).toBe(0)
      expect(other.matchedChars).toBe(0)
      expect(other.divergence).toEqual({ part: 'envelope', field })
      // The first family is still warm.
      const back = cache.observe(request(messages, envelope))
      expect(back.family).toBe(first.family)
      expect(back.cachedTokens).toBe(Math.floor(promptText(request(messages)).length / 4))
    },
  )

  it('splits families on a present versus absent field, and on stop order', () => {
    const cache = new PrefixCache('bytes')
    const messages = users(2)
    cache.observe(request(messages))
    expect(cache.observe(request(messages, { temperature: 0 })).divergence).toEqual({
      part: 'envelope',
      field: 'temperature',
    })
    cache.observe(request(messages, { stop: ['a', 'b'] }))
    const reordered = cache.observe(request(messages, { stop: ['b', 'a'] }))
    expect(reordered.cachedTokens).toBe(0)
    expect(reordered.divergence).toEqual({ part: 'envelope', field: 'stop' })
  })

  it('keeps maxTokens, purpose, sessionId and signal out of the family', () => {
    const cache = new PrefixCache('bytes')
    const messages = users(3)
    const first = cache.observe(request(messages, { maxTokens: 100, purpose: 'conversation', sessionId: 'a' }))
    const second = cache.observe(
      request(messages, {
        maxTokens: 9000,
        purpose: 'compaction',
        sessionId: 'b',
        signal: new AbortController().signal,
      }),
    )
    expect(second.family).toBe(first.family)
    expect(second.cachedTokens).toBe(Math.floor(promptText(request(messages)).length / 4))
  })

  it('records index, purpose and session, and totals every observation or a filtered subset', () => {
    const cache = new PrefixCache()
    expect(cache.profile).toEqual({ kind: 'bytes', name: 'bytes', ttlMs: Infinity })
    const messages = users(3)
    const a = cache.observe(request(messages, { purpose: 'conversation', sessionId: 's' }))
    const b = cache.observe(request(messages))
    expect(a).toMatchObject({ index: 0, purpose: 'conversation', sessionId: 's' })
    expect(b).toMatchObject({ index: 1, purpose: 'unspecified', sessionId: undefined })
    expect(Object.isFrozen(b)).toBe(true)
    expect(cache.observations).toEqual([a, b])
    const promptTokens = a.promptTokens + b.promptTokens
    expect(cache.totals()).toEqual({
      requests: 2,
      promptTokens,
      cachedTokens: b.cachedTokens,
      uncachedTokens: promptTokens - b.cachedTokens,
      hitRatio: b.cachedTokens / promptTokens,
    })
    expect(cache.totals((observation) => observation.purpose === 'conversation')).toEqual({
      requests: 1,
      promptTokens: a.promptTokens,
      cachedTokens: 0,
      uncachedTokens: a.promptTokens,
      hitRatio: 0,
    })
    expect(cache.totals(() => false)).toEqual({
      requests: 0,
      promptTokens: 0,
      cachedTokens: 0,
      uncachedTokens: 0,
      hitRatio: 0,
    })
  })

  it('stores every uncached token: cacheWriteTokens = uncachedTokens', () => {
    const cache = new PrefixCache('bytes')
    // One message of 401 characters: 101 prompt tokens, 100 whole ones.
    const prompt = request([userMessageOfChars(401)])
    expect(cache.observe(prompt)).toMatchObject({
      promptTokens: 101,
      cachedTokens: 0,
      uncachedTokens: 101,
      cacheWriteTokens: 101,
    })
    expect(cache.observe(prompt)).toMatchObject({
      promptTokens: 101,
      cachedTokens: 100,
      uncachedTokens: 1,
      cacheWriteTokens: 1,
    })
    // Extended by a message of 600 characters: 1001 characters, 251 tokens, 100 read.
    const extended = request([userMessageOfChars(401), userMessageOfChars(600, 2)])
    expect(cache.observe(extended)).toMatchObject({
      promptTokens: 251,
      cachedTokens: 100,
      uncachedTokens: 151,
      cacheWriteTokens: 151,
    })
  })

  it('rejects a negative or non-numeric clock advance', () => {
    const cache = new PrefixCache()
    expect(() => cache.advanceClock(-1)).toThrow(RangeError)
    expect(() => cache.advanceClock(Number.NaN)).toThrow(/milliseconds must be ≥ 0, got NaN/)
    expect(() => cache.advanceClock(0)).not.toThrow()
  })
})
