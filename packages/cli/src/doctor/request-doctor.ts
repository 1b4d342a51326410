import type { CanonicalRequest, RequestApi, SeenRequest } from '@warmfold/cache-ledger/prefix'
import {
  compareSeenRequests,
  readWireRequest,
  SegmentInterner,
  SegmentTrie,
  seenRequestOf,
} from '@warmfold/cache-ledger/prefix'
import type { DoctorBreak, DoctorReport, DoctorRequest, UnreadableLine } from './doctor-report.ts'
import type { LoggedRequest, LogLine } from './read-request-log.ts'

/**
 * Diagnoses a request log one line at a time, in log order: each request is compared with the
 * requests before it, as a provider's prefix cache would see them. Keeps segment fingerprints
 * (interned texts shared by every request that sends them), never the bodies.
 */
export class RequestDoctor {
  private readonly interner = new SegmentInterner()
  /** One trie per cache family: what the provider could have cached. */
  private readonly families = new Map<string, SegmentTrie>()
  /**
   * Per API, over all families: the whole prompt, and the messages alone (to find the history a
   * request replays when its tools or system changed).
   */
  private readonly apis = new Map<RequestApi, { prompts: SegmentTrie; messages: SegmentTrie }>()
  private readonly familyLatest = new Map<string, number>()
  private readonly seen = new Map<number, SeenRequest>()
  private readonly requests: DoctorRequest[] = []
  private readonly unreadable: UnreadableLine[] = []
  private lastMessagesApi: RequestApi | undefined

  /** Adds the next line of the log. */
  add(line: LogLine): void {
    if (line.kind === 'unreadable') {
      this.unreadable.push({ index: line.index, reason: line.reason })
      return
    }
    const { request } = line
    const reading = readWireRequest(request, this.lastMessagesApi)
    if ('error' in reading) {
      this.unreadable.push({ index: request.index, reason: reading.error })
      return
    }
    const { canonical } = reading
    if (canonical.api === 'openai-chat' || canonical.api === 'anthropic-messages') this.lastMessagesApi = canonical.api
    this.requests.push(this.diagnose(request, canonical))
  }

  private diagnose(request: LoggedRequest, canonical: CanonicalRequest): DoctorRequest {
    const current = seenRequestOf(canonical, this.interner, request.index, request.t)
    const { family, layout } = current
    let familyTrie = this.families.get(family)
    if (!familyTrie) this.families.set(family, (familyTrie = new SegmentTrie()))
    let apiTries = this.apis.get(canonical.api)
    if (!apiTries)
      this.apis.set(canonical.api, (apiTries = { prompts: new SegmentTrie(), messages: new SegmentTrie() }))
    const inFamily = familyTrie.match(layout)
    const anyFamily = apiTries.prompts.match(layout)
    // The same family wins a tie: its match is what the cache could actually reuse.
    const prompt = inFamily.candidate !== undefined && inFamily.depth >= anyFamily.depth ? inFamily : anyFamily
    const history = apiTries.messages.match(layout, layout.headSegments)
    const reachesMessages =
      prompt.depth > layout.headSegments || (prompt.depth > 0 && prompt.depth === layout.segments.length)
    // A request that changed its tools or system shares no prefix with the conversation it
    // replays; its messages still tell which request that was.
    const bestIndex = reachesMessages
      ? prompt.candidate
      : history.depth > 0
        ? history.candidate
        : prompt.depth > 0
          ? prompt.candidate
          : this.familyLatest.get(family)
    const best = bestIndex === undefined ? undefined : this.seen.get(bestIndex)
    const compared = best ? compareSeenRequests(current, best) : { divergence: { part: 'first' as const }, changes: [] }
    familyTrie.insert(layout, request.index)
    apiTries.prompts.insert(layout, request.index)
    apiTries.messages.insert(layout, request.index, layout.headSegments)
    this.familyLatest.set(family, request.index)
    this.seen.set(request.index, current)
    const promptChars = layout.offsets[layout.segments.length] as number
    return {
      index: request.index,
      api: canonical.api,
      model: canonical.model,
      promptChars,
      cachedChars: inFamily.chars,
      uncachedChars: promptChars - inFamily.chars,
      bestMatch: best ? best.index : null,
      divergence: compared.divergence,
      changes: compared.changes,
      ...(best?.t !== undefined && request.t !== undefined ? { idleMs: request.t - best.t } : {}),
    }
  }

  /** The report over every line added so far. */
  report(): DoctorReport {
    const breaks: DoctorBreak[] = this.requests
      .filter((request) => request.changes.length > 0)
      .map(({ model: _model, cachedChars: _cached, idleMs: _idle, ...item }) => item)
      .toSorted((a, b) => b.uncachedChars - a.uncachedChars || a.index - b.index)
    const promptChars = this.requests.reduce((sum, request) => sum + request.promptChars, 0)
    const cachedChars = this.requests.reduce((sum, request) => sum + request.cachedChars, 0)
    return {
      version: 1,
      requests: [...this.requests],
      breaks,
      unreadable: [...this.unreadable],
      totals: {
        requests: this.requests.length,
        promptChars,
        cachedChars,
        uncachedChars: promptChars - cachedChars,
        breaks: breaks.length,
      },
    }
  }
}
