import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import type { ExchangeRecord } from './exchange-record.ts'

/** A session's last conversation request as a shared store keeps it, for the other replicas. */
export interface StoredConversation {
  /** The replica (proxy process) that forwarded it. */
  readonly replica: string
  /** The session the replica's observer put it in. */
  readonly sessionKey: string
  readonly api: RequestApi
  /** The request's id in its replica. */
  readonly id: number
  /** When it arrived (ms since the epoch). */
  readonly at: number
  readonly method: string
  /** Path and query as received (credentials in the query redacted). */
  readonly url: string
  /** The body, byte for byte as forwarded (UTF-8). */
  readonly body: string
}

/**
 * Where the observer writes instead of a JSONL log (`warmfold proxy --store`), shared by replicas
 * behind one address: every exchange's log line, and each session's last conversation request so
 * a summary request that reaches another replica is rewritten warm. `@warmfold/proxy` holds no
 * database driver: the host (the CLI) gives an implementation (it uses the session stores).
 */
export interface ProxyStore {
  /** This replica's name in the store (what `recall` of the others returns as `replica`). */
  readonly replica: string
  /** Queues one exchange's log line (the JSONL line's object: no request body). Never throws. */
  append(line: Readonly<Record<string, unknown>>, record: ExchangeRecord): void
  /** Queues `conversation` as its session's last conversation request (replacing the one before). Never throws. */
  remember(conversation: StoredConversation): void
  /** The other replicas' last conversation requests of `api` that arrived at `sinceMs` or later. */
  recall(api: RequestApi, sinceMs: number): Promise<readonly StoredConversation[]>
  /** Writes what is queued and lets the store go; rejects with the first write failure. */
  close(): Promise<void>
}
