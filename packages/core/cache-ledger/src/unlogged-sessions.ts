import type { GenerateOptions } from '@warmfold/llm'

/** Closed session ids remembered at most (the oldest are forgotten first): a long-running host closes many. */
const REMEMBERED_CLOSES = 10_000

/**
 * Why the ledger cannot log to a session, in words: the store closed it while a request was in
 * flight, or before a request was sent, or never opened it while the ledger was mounted.
 */
export class UnloggedSessions {
  private readonly closedIds = new Set<string>()
  /** Sessions already warned about (the warnings for a closed or unknown session are said once). */
  private readonly warned = new Set<string>()
  private readonly inFlightAtClose = new WeakSet<GenerateOptions>()

  /** The store opened session `id` (again): what was said about it no longer holds. */
  opened(id: string): void {
    this.closedIds.delete(id)
    this.warned.delete(id)
  }

  /** The store closed session `id`. */
  closed(id: string): void {
    this.closedIds.add(id)
    if (this.closedIds.size > REMEMBERED_CLOSES) this.closedIds.delete(this.closedIds.values().next().value as string)
  }

  /** `request` was still running, its signal not aborted, when its session was closed. */
  closedInFlight(request: GenerateOptions): void {
    this.inFlightAtClose.add(request)
  }

  /**
   * The warning for a `type` event of `request` (when there is one) that session `id` cannot take,
   * or `undefined` when it was said already.
   */
  warning(id: string, type: string, request?: GenerateOptions): string | undefined {
    if (request && this.inFlightAtClose.has(request))
      return (
        `CacheLedger: session ${id} was closed while a ${request.purpose ?? 'unspecified'} request to ` +
        `${request.provider}/${request.model} was in flight, so that request's ${type} is not logged`
      )
    if (this.warned.has(id)) return undefined
    this.warned.add(id)
    return this.closedIds.has(id)
      ? `CacheLedger: session ${id} was closed, so the ${type} events of requests sent for it since are not logged ` +
          `(said once per session)`
      : `CacheLedger: session ${id} is not open in ctx.sessions, or was opened before the ledger was mounted, so ` +
          `its ${type} events are not logged (said once per session)`
  }
}
