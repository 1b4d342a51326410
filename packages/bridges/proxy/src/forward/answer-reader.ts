import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import type { AnswerFacts, ProviderUsage } from '../proxy-exchange.ts'
import type { AnswerState } from './read-answer-event.ts'
import { readAnswerEvent } from './read-answer-event.ts'

/** What an answer turned out to carry so far: the first text or the first tool call. */
export type DecidedContent = 'text' | 'tool-call'

/** {@link AnswerFacts} without the timing and status the HTTP path adds. */
export type AnswerReading = Pick<
  AnswerFacts,
  'streamed' | 'usage' | 'content' | 'providerDiagnosis' | 'responseId' | 'unreadable'
>

/**
 * Reads a copy of an upstream answer (already decompressed) as it streams: server-sent events are
 * read event by event, a JSON body once it is whole. It never touches the bytes the client gets;
 * whatever it fails to read, it says why in `unreadable`.
 *
 * `decided` is the content known so far, for fail-open: `text` once a text delta arrived before
 * any tool call, `tool-call` once a tool call did (reasoning decides nothing: a tool call may
 * follow it). {@link AnswerReader.onDecided} is called once, when it is first known.
 */
export class AnswerReader {
  private readonly state: AnswerState = { text: false, reasoning: false, toolCall: false }
  private readonly decoder = new TextDecoder()
  private pending = ''
  private readonly jsonChunks: Buffer[] = []
  private unreadable: string | undefined
  private events = 0
  private decidedContent: DecidedContent | undefined

  constructor(
    /** The answer's API; undefined for a route no dialect claims (nothing is read). */
    private readonly api: RequestApi | undefined,
    /** Whether the answer is `text/event-stream`. */
    readonly streamed: boolean,
  ) {}

  /** Called once, when the content is first decided. */
  onDecided: ((content: DecidedContent) => void) | undefined

  get decided(): DecidedContent | undefined {
    return this.decidedContent
  }

  /** Reads the next chunk of the (decompressed) answer. */
  push(chunk: Buffer): void {
    if (this.api === undefined || this.unreadable !== undefined) return
    if (!this.streamed) {
      this.jsonChunks.push(chunk)
      return
    }
    this.pending += this.decoder.decode(chunk, { stream: true })
    this.drainEvents(false)
  }

  /**
   * The answer ended; returns what was read. `problem`: why it cannot be read whole (cut before
   * its end, an encoding not read), which becomes `unreadable` unless an earlier problem is.
   */
  end(problem?: string): AnswerReading {
    if (this.api !== undefined && this.unreadable === undefined) {
      if (this.streamed) {
        this.pending += this.decoder.decode()
        this.drainEvents(true)
      } else if (problem === undefined) this.readJsonBody()
    }
    if (problem !== undefined && this.unreadable === undefined) this.unreadable = problem
    const state = this.state
    return {
      streamed: this.streamed,
      content:
        this.api === undefined
          ? 'unknown'
          : state.toolCall
            ? 'tool-call'
            : state.text || state.reasoning
              ? 'text'
              : 'empty',
      ...(this.usage() ? { usage: this.usage() } : {}),
      ...(state.providerDiagnosis !== undefined ? { providerDiagnosis: state.providerDiagnosis } : {}),
      ...(state.responseId !== undefined ? { responseId: state.responseId } : {}),
      ...(this.unreadable !== undefined ? { unreadable: this.unreadable } : {}),
    }
  }

  private usage(): ProviderUsage | undefined {
    const { input, cacheRead, cacheWrite, output } = this.state
    if (input === undefined && output === undefined) return undefined
    const read = cacheRead ?? 0
    const write = cacheWrite ?? 0
    // Anthropic counts cached tokens beside input_tokens; the other APIs count them inside it.
    const inputTokens = this.api === 'anthropic-messages' ? (input ?? 0) + read + write : (input ?? 0)
    return { inputTokens, cacheReadTokens: read, cacheWriteTokens: write, outputTokens: output ?? 0 }
  }

  private readJsonBody(): void {
    const text = Buffer.concat(this.jsonChunks).toString('utf8')
    this.jsonChunks.length = 0
    if (text.trim() === '') {
      this.unreadable = 'the answer body was empty'
      return
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch (error) {
      this.unreadable = `the answer is not JSON: ${(error as Error).message}`
      return
    }
    // Gemini's streamGenerateContent without alt=sse answers a JSON array of chunks.
    for (const item of Array.isArray(body) ? body : [body]) this.readEvent(item)
  }

  private drainEvents(atEnd: boolean): void {
    for (;;) {
      const match = /\r?\n\r?\n/.exec(this.pending)
      if (!match) break
      this.readSseBlock(this.pending.slice(0, match.index))
      this.pending = this.pending.slice(match.index + match[0].length)
      if (this.unreadable !== undefined) return
    }
    if (atEnd && this.pending.trim() !== '') {
      this.readSseBlock(this.pending)
      this.pending = ''
    }
  }

  private readSseBlock(block: string): void {
    const data: string[] = []
    for (const line of block.split(/\r?\n/))
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
    if (data.length === 0) return
    const text = data.join('\n')
    if (text === '[DONE]') return
    let event: unknown
    try {
      event = JSON.parse(text)
    } catch (error) {
      this.unreadable = `server-sent event ${this.events + 1} is not JSON: ${(error as Error).message}`
      return
    }
    this.readEvent(event)
  }

  private readEvent(event: unknown): void {
    this.events++
    if (typeof event !== 'object' || event === null || Array.isArray(event)) {
      this.unreadable = `answer event ${this.events} is not a JSON object`
      return
    }
    readAnswerEvent(this.api as RequestApi, this.state, event as Record<string, unknown>)
    if (this.decidedContent === undefined && (this.state.toolCall || this.state.text)) {
      this.decidedContent = this.state.toolCall ? 'tool-call' : 'text'
      this.onDecided?.(this.decidedContent)
    }
  }
}
