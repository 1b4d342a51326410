import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { isRecord } from '@warmfold/cache-ledger/prefix'
import type { RememberedRequest } from '../proxy-exchange.ts'
import { parseBody } from './observe-exchange.ts'
import type { ProxyStore, StoredConversation } from './proxy-store.ts'

/** A conversation request another replica forwarded, as the observer's memory holds it. */
export interface RecalledConversation {
  readonly at: number
  readonly remembered: RememberedRequest
}

/**
 * The other replicas' last conversation requests, brought in from the shared store on a miss
 * ({@link recall}): one per replica and session (the latest), dropped once older than the cache TTL.
 */
export class RecalledConversations {
  private readonly held = new Map<string, RecalledConversation & { readonly stored: StoredConversation }>()

  constructor(
    private readonly store: ProxyStore,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Asks the store for `api`'s requests within the TTL; true when any was not held before. */
  async recall(api: RequestApi): Promise<boolean> {
    const now = this.now()
    this.sweep(now)
    const stored = await this.store.recall(api, now - this.ttlMs)
    let fresh = false
    for (const conversation of stored) {
      if (conversation.replica === this.store.replica || conversation.api !== api) continue
      const key = `${conversation.replica}\n${conversation.sessionKey}`
      const held = this.held.get(key)
      if (held && held.stored.id === conversation.id && held.at === conversation.at) continue
      if (held && held.at > conversation.at) continue
      const remembered = rememberedOf(conversation)
      if (!remembered) continue
      this.held.set(key, { at: conversation.at, remembered, stored: conversation })
      fresh = true
    }
    return fresh
  }

  /** The held requests of `api` within the TTL of now. */
  candidates(api: RequestApi): RecalledConversation[] {
    const now = this.now()
    this.sweep(now)
    return [...this.held.values()].filter((entry) => entry.remembered.api === api)
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.held) if (now - entry.at > this.ttlMs) this.held.delete(key)
  }
}

/** `stored` as the warm room reads a remembered request; undefined when its body is not a JSON object. */
function rememberedOf(stored: StoredConversation): RememberedRequest | undefined {
  const body = Buffer.from(stored.body, 'utf8')
  const parsed = parseBody(body)
  const json = 'json' in parsed ? parsed.json : undefined
  if (!isRecord(json)) return undefined
  return {
    request: {
      id: stored.id,
      receivedAt: stored.at,
      method: stored.method,
      url: stored.url,
      route: { api: stored.api, kind: 'generate', streamByPath: false },
      rawHeaders: [],
      headers: {},
      body,
      stream: false,
    },
    api: stored.api,
    json,
    sessionKey: `${stored.replica}/${stored.sessionKey}`,
  }
}
