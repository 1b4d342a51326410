import { randomUUID } from 'node:crypto'
import type { Context } from '@cordisjs/core'
import { LLM_RUNTIME_SERVICE, requireServices, SESSION_STORE_SERVICE } from '@warmfold/agent-loop'
import type { CompactionAgent, CompactionResult, CompactionTrigger, ManualCompactionAgent } from '@warmfold/compaction'
import {
  checkpointSource,
  CompactionEngine,
  ManualCompactionError,
  toolPairingBalancedAfter,
  toolPairingBalancedBefore,
} from '@warmfold/compaction'
import type { CallConfig } from '@warmfold/llm'
import { createMessage, createUserMessage, textOf } from '@warmfold/llm'
import type { Session } from '@warmfold/session'

const INSTRUCTION = 'Summarize the conversation so far for yourself: goal, decisions, files, open work. No tool calls.'

/**
 * A small engine that keeps the contract: it summarizes the largest tool-pairing balanced head
 * with one warm summary call (the conversation's envelope and messages, plus one instruction)
 * and commits it as one bracketed transaction.
 */
export class MyEngine extends CompactionEngine<MyEngine.Config> {
  // Optional for cordis, checked at every entry point instead: a required inject that is missing
  // would keep the engine pending without a word (no compaction, no warning).
  static inject = { llm: { required: false }, sessions: { required: false } }

  /** The engine's own context: a method called through ctx.compaction may see the caller's. */
  private readonly owner: Context

  // cordis 3.18 needs the explicit constructor for ctx.plugin(MyEngine, config) to type-check.
  constructor(ctx: Context, config: MyEngine.Config) {
    super(ctx, config)
    this.owner = ctx
  }

  /** @throws MissingServiceError naming the package to mount when ctx.llm or ctx.sessions is not there. */
  private requireServices(): void {
    requireServices(this.owner, 'MyEngine', [LLM_RUNTIME_SERVICE, SESSION_STORE_SERVICE])
  }

  async compactIfNeeded(
    agent: CompactionAgent,
    trigger: CompactionTrigger,
    signal?: AbortSignal,
  ): Promise<CompactionResult | null> {
    this.requireServices()
    const characters = agent.session
      .deriveMessages()
      .reduce((sum, message) => sum + JSON.stringify(message.content).length, 0)
    if (trigger !== 'context-overflow' && characters < this.config.maxCharacters) return null
    return this.compactHead(agent, trigger, signal)
  }

  async compactNow(agent: ManualCompactionAgent, signal?: AbortSignal): Promise<CompactionResult | null> {
    this.requireServices()
    return agent.runMaintenance(async (taskSignal) => {
      try {
        return await this.compactHead(agent, 'manual', AbortSignal.any([taskSignal, ...(signal ? [signal] : [])]))
      } catch (error) {
        throw new ManualCompactionError('summary', `manual compaction failed: ${String(error)}`, { cause: error })
      }
    })
  }

  async compactRegion(
    start: number,
    end: number,
    agent: CompactionAgent,
    signal?: AbortSignal,
  ): Promise<CompactionResult> {
    this.requireServices()
    const { session } = agent
    const nodes = session.surface.nodes
    if (!(start >= 0 && start <= end && end < nodes.length))
      throw new RangeError(`region ${start}..${end} is not on the surface (0..${nodes.length - 1})`)
    if (!toolPairingBalancedBefore(session, nodes[start]!) || !toolPairingBalancedAfter(session, nodes[end]!)) {
      throw new RangeError(`region ${start}..${end} would separate a tool call from its result`)
    }
    return this.summarize(agent, start, end, 'manual', signal)
  }

  /** Everything but the newest node, cut back until no tool call is separated from its result. */
  private async compactHead(agent: CompactionAgent, trigger: CompactionTrigger | 'manual', signal?: AbortSignal) {
    const nodes = agent.session.surface.nodes
    for (let end = nodes.length - 2; end >= 1; end--) {
      if (toolPairingBalancedAfter(agent.session, nodes[end]!)) return this.summarize(agent, 0, end, trigger, signal)
    }
    return null
  }

  private async summarize(
    agent: CompactionAgent,
    start: number,
    end: number,
    trigger: CompactionTrigger | 'manual',
    signal?: AbortSignal,
  ): Promise<CompactionResult> {
    const { session } = agent
    const shadowedSeqs = session.surface.nodes.slice(start, end + 1)
    const compactionId = randomUUID()
    const turn = trigger === 'manual' ? null : openTurn(session)
    const startEvent = session.append('compaction/start', { compactionId, turn, trigger })
    let committed: Omit<CompactionResult, 'startSeq' | 'endSeq'>
    try {
      committed = await this.commit(session, start, end, shadowedSeqs, compactionId, agent, signal)
    } catch (error) {
      // Every failure closes the bracket with the reason; no checkpoint landed.
      session.append('compaction/end', { compactionId, turn, error: String(error) })
      throw error
    }
    const endEvent = session.append('compaction/end', { compactionId, turn })
    await this.owner.sessions.flush(session)
    return { ...committed, startSeq: startEvent.seq, endSeq: endEvent.seq }
  }

  private async commit(
    session: Session,
    start: number,
    end: number,
    shadowedSeqs: number[],
    compactionId: string,
    agent: CompactionAgent,
    signal?: AbortSignal,
  ) {
    // C2 + C3: the conversation's envelope (effort, temperature, stop, system, tools) and the
    // region's messages byte for byte, then one instruction: the call reads the cached prefix.
    // Spread, never copied field by field: a field the header does not set stays absent, not undefined.
    const header = session.requestHeader()
    const config: CallConfig = header?.config ?? { provider: agent.options.provider, model: agent.options.model }
    const { config: _config, ...prompt } = header ?? { config }
    const maxTokens = this.config.summaryMaxTokens
    const region = session.deriveMessages().slice(start, end + 1)
    const reply = await this.owner.llm.generate({
      ...config,
      ...prompt,
      maxTokens,
      messages: [...region, createUserMessage(INSTRUCTION)],
      purpose: 'compaction',
      sessionId: session.id,
      ...(signal ? { signal } : {}),
    })
    const summary = reply.content.filter((block) => block.type === 'text')
    if (!textOf(summary)) throw new Error('the summary call returned no text')
    if (session.surface.nodes.slice(start, end + 1).join() !== shadowedSeqs.join())
      throw new Error('the surface changed while summarizing')
    // A rough price; mount @warmfold/token-meter and sum ctx.tokenMeter.priceOf for a real one.
    const shadowedTokenCount = Math.ceil(JSON.stringify(region).length / 4)
    const checkpoint = createMessage({ role: 'user', content: summary, source: checkpointSource(compactionId) })
    const { stop, ...settings } = config
    // The pricing event and the checkpoint that replaces the region: adjacent, and one unit.
    const [summaryEvent, checkpointEvent] = session.unit(() => [
      session.append('compaction/summary', {
        compactionId,
        summary,
        shadowedRange: { start, end },
        shadowedSeqs,
        shadowedTokenCount,
        ...settings,
        ...(stop ? { stop: [...stop] } : {}),
        maxTokens,
        ...(reply.usage ? { usage: reply.usage } : {}),
      }),
      session.append(
        'user/message',
        { message: checkpoint },
        { op: 'replace', start, end, sourceEventSeqs: shadowedSeqs },
      ),
    ])
    return {
      compactionId,
      summarySeq: summaryEvent.seq,
      checkpointSeq: checkpointEvent.seq,
      summary,
      shadowedRange: { start, end },
      shadowedSeqs,
      shadowedTokenCount,
    }
  }
}

export namespace MyEngine {
  export interface Config {
    /** Compact under pressure once the surface's messages reach this many characters. */
    maxCharacters: number
    /** Output cap of the summary call. */
    summaryMaxTokens: number
  }
}

/** The running turn (the agent loop logs `turn/start` and `turn/end`), or null between turns. */
function openTurn(session: Session): number | null {
  for (let seq = session.length - 1; seq >= 0; seq--) {
    const { type, data } = session.eventAt(seq) as { type: string; data: { turn?: number } }
    if (type === 'turn/end') return null
    if (type === 'turn/start') return data.turn ?? null
  }
  return null
}
