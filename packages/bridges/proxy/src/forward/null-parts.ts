import type { Exchange, ExchangeObserver, WarmPlanner } from '../proxy-exchange.ts'

/**
 * An observer that observes nothing: holds no request, renders a page saying so. Used until the
 * `observe/` room's observer is given; `onExchange`, when set, sees each exchange (tests record them).
 */
export function nullObserver(onExchange?: (exchange: Exchange) => void): ExchangeObserver {
  return {
    observe: (exchange) => onExchange?.(exchange),
    lastConversationFor: () => undefined,
    renderPage: () =>
      '<!doctype html><meta charset="utf-8"><title>warmfold proxy</title>' +
      '<p>warmfold proxy: forwarding; no observer is loaded, so nothing is recorded.</p>',
    snapshot: () => ({ observer: 'none' }),
    close: async () => undefined,
  }
}

/** A planner that forwards every request as it came. Used until the `warm/` room's planner is given. */
export const forwardingPlanner: WarmPlanner = {
  plan: () => ({ action: 'forward', reason: 'no warm planner is loaded' }),
}
