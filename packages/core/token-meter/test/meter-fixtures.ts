import type { TokenUsage, ToolDefinition } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  imageBlock,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { RequestHeader, Session } from '@warmfold/session'
import { headerEquals } from '@warmfold/session'
import fc from 'fast-check'
import type { TokenBaseline, TokenMeasurement, TokenMeter } from '../src/index.ts'
import type { NodePrice } from '../src/token-measurement.ts'

// Adapted from packages/core/session/test/session-fixtures.ts: adds reasoning, images, usage
// on assistant messages and headers that vary system prompt and tool order.

/** Two tools whose order matters for the envelope. */
export const READ_TOOL: ToolDefinition = {
  name: 'read',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
}
export const WRITE_TOOL: ToolDefinition = {
  name: 'write',
  description: 'Write a file',
  parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } },
}

/** Which usage an assistant message carries. */
export type UsageShape = 'none' | 'prompt' | 'cache-only' | 'output-only'

/** One scripted operation against a session. */
export type Operation =
  | { kind: 'user'; text: string }
  | {
      kind: 'assistant'
      text: string
      reasoning: string | null
      calls: number
      usage: UsageShape
      input: number
      cached: number
    }
  | { kind: 'result'; text: string; image: boolean }
  | { kind: 'header'; effort: 'low' | 'high'; system: string | null; tools: 'none' | 'read-write' | 'write-read' }
  | { kind: 'replace'; from: number; span: number; text: string; keep: boolean[] }

const text = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 })

/** Random operation sequences; replace positions are fractions resolved against the live surface. */
export const operations = fc.array(
  fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('user' as const), text }), weight: 3 },
    {
      arbitrary: fc.record({
        kind: fc.constant('assistant' as const),
        text,
        reasoning: fc.option(text, { nil: null }),
        calls: fc.integer({ min: 0, max: 2 }),
        usage: fc.constantFrom<UsageShape>('none', 'prompt', 'prompt', 'cache-only', 'output-only'),
        input: fc.nat(5000),
        cached: fc.nat(5000),
      }),
      weight: 4,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('result' as const),
        text: fc.string({ unit: 'binary', maxLength: 30 }),
        image: fc.boolean(),
      }),
      weight: 3,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('header' as const),
        effort: fc.constantFrom('low' as const, 'high' as const),
        system: fc.constantFrom(null, '', 'Be terse.', 'Be thorough.'),
        tools: fc.constantFrom('none' as const, 'read-write' as const, 'write-read' as const),
      }),
      weight: 2,
    },
    {
      // `keep[i]` keeps the run's i-th node on the surface after the new node (a checkpoint that
      // carries pinned messages); the run's last node is always shadowed.
      arbitrary: fc.record({
        kind: fc.constant('replace' as const),
        from: fc.nat(1000),
        span: fc.integer({ min: 1, max: 4 }),
        text,
        keep: fc.array(fc.boolean(), { maxLength: 3 }),
      }),
      weight: 2,
    },
  ),
  { maxLength: 60, size: 'max' },
)

/** The header an operation logs. */
export function headerOf(operation: Extract<Operation, { kind: 'header' }>): RequestHeader {
  const tools =
    operation.tools === 'none'
      ? undefined
      : operation.tools === 'read-write'
        ? [READ_TOOL, WRITE_TOOL]
        : [WRITE_TOOL, READ_TOOL]
  return {
    config: { provider: 'p', model: 'm', reasoningEffort: operation.effort },
    ...(operation.system === null ? {} : { system: operation.system }),
    ...(tools ? { tools } : {}),
  }
}

function usageOf(operation: Extract<Operation, { kind: 'assistant' }>): TokenUsage | undefined {
  switch (operation.usage) {
    case 'none':
      return undefined
    case 'prompt':
      return { inputTokens: operation.input, cacheReadTokens: operation.cached, outputTokens: 10 }
    case 'cache-only':
      return { cacheWriteTokens: operation.input }
    case 'output-only':
      return { outputTokens: operation.input }
  }
}

/** Applies one operation to `session` with ids drawn from `id`. */
export function applyOperation(session: Session, operation: Operation, id: () => string): void {
  switch (operation.kind) {
    case 'user':
      session.append('user/message', { message: createUserMessage(operation.text, id()) }, 'append')
      break
    case 'assistant': {
      const messageId = id()
      const calls = Array.from({ length: operation.calls }, (_, index) =>
        toolCallBlock(`call-${messageId}-${index}`, 'read', `{"path":"f${index}"}`),
      )
      const reasoning = operation.reasoning === null ? [] : [reasoningBlock(operation.reasoning)]
      const message = createAssistantMessage(
        [...reasoning, textBlock(operation.text), ...calls],
        { provider: 'p', model: 'm' },
        messageId,
      )
      const usage = usageOf(operation)
      session.append('assistant/message', usage ? { message, usage } : { message }, 'append')
      break
    }
    case 'result': {
      const content = operation.image
        ? [textBlock(operation.text || 'ok'), imageBlock('image/png', 'iVBORw0KGgo=')]
        : operation.text || 'ok'
      session.append('tool/result', { message: createToolResultMessage('call', content, { id: id() }) }, 'append')
      break
    }
    case 'header':
      session.append('request/header', { header: headerOf(operation), reason: 'change' })
      break
    case 'replace': {
      const nodes = session.surface.nodes
      if (nodes.length === 0) break
      const start = operation.from % nodes.length
      const end = Math.min(nodes.length - 1, start + operation.span - 1)
      const run = nodes.slice(start, end + 1)
      const keep = run.filter((_, index) => index < run.length - 1 && operation.keep[index] === true)
      const shadowed = run.filter((seq) => !keep.includes(seq))
      session.append(
        'user/message',
        { message: createUserMessage(operation.text, id()) },
        { op: 'replace', start, end, sourceEventSeqs: shadowed, ...(keep.length ? { keep } : {}) },
      )
      break
    }
  }
}

/** A deterministic id source: `m0`, `m1`, … */
export function idSource(): () => string {
  let counter = 0
  return () => `m${counter++}`
}

/** A measurement as plain data (reads the lazy `nodes`), for deep equality. */
export interface PlainMeasurement {
  nodes: NodePrice[]
  surfaceTokens: number
  envelopeTokens: number
  totalTokens: number
  baseline: TokenBaseline
}

/** Copies every field of `measurement` into plain objects. */
export function plain(measurement: TokenMeasurement): PlainMeasurement {
  return {
    nodes: measurement.nodes.map((node) => ({ ...node })),
    surfaceTokens: measurement.surfaceTokens,
    envelopeTokens: measurement.envelopeTokens,
    totalTokens: measurement.totalTokens,
    baseline: { ...measurement.baseline },
  }
}

/**
 * The measurement the spec describes, computed naively from the whole session with `meter`'s
 * per-message prices: an independent oracle for the incremental state.
 */
export function referenceMeasurement(session: Session, meter: TokenMeter): PlainMeasurement {
  const nodes = session.surface.nodes.map((seq) => ({
    seq,
    tokens: meter.estimateMessage(session.deriveEventMessage(session.eventAt(seq)!)!),
  }))
  const surfaceTokens = nodes.reduce((sum, node) => sum + node.tokens, 0)
  const header = session.requestHeader()
  const envelopeTokens = header ? meter.estimateSystem(header.system) + meter.estimateTools(header.tools) : 0
  const heuristic: TokenBaseline = { kind: 'heuristic', tokens: envelopeTokens + surfaceTokens }
  const events = session.events
  const anchor = events.findLast(
    (event) =>
      event.type === 'assistant/message' &&
      event.data.usage !== undefined &&
      (event.data.usage.inputTokens ?? event.data.usage.cacheReadTokens ?? event.data.usage.cacheWriteTokens) !==
        undefined,
  )
  let baseline: TokenBaseline = heuristic
  if (anchor && anchor.type === 'assistant/message') {
    const headerThen = events.findLast((event) => event.type === 'request/header' && event.seq < anchor.seq)
    const envelopeThen = headerThen?.type === 'request/header' ? headerThen.data.header : undefined
    const sameEnvelope =
      envelopeThen === undefined || header === undefined ? envelopeThen === header : headerEquals(envelopeThen, header)
    const replacedSince = events.some((event) => event.seq >= anchor.seq && event.surface?.op === 'replace')
    if (sameEnvelope && !replacedSince) {
      const usage = anchor.data.usage!
      const reported = (usage.inputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)
      const appended = nodes.filter((node) => node.seq >= anchor.seq).reduce((sum, node) => sum + node.tokens, 0)
      baseline = { kind: 'usage', tokens: reported + appended, anchorSeq: anchor.seq, reportedPromptTokens: reported }
    }
  }
  return { nodes, surfaceTokens, envelopeTokens, totalTokens: baseline.tokens, baseline }
}
