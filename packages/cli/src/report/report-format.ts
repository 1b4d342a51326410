import type { PriceProfile } from '@warmfold/prefix-cache-testkit'
import type { ReportRequest, ReportTotals } from './report-model.ts'

/** `1,234,567`. */
export function integer(value: number): string {
  return Math.round(value).toLocaleString('en-US')
}

/** `12.3%`, or `-` without a ratio. */
export function percent(ratio: number | null): string {
  return ratio === null ? '-' : `${(ratio * 100).toFixed(1)}%`
}

/** `3.1 s`. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/** Dollars with enough digits for a cheap session (`$0.00123`, `$1.234`, `$12.34`). */
export function usd(value: number): string {
  if (value === 0) return '$0'
  return `$${value.toFixed(value < 0.01 ? 5 : value < 10 ? 3 : 2)}`
}

/** The cost in dollars and input-token units, or only units when the price has no dollar rate. */
export function costText(totals: ReportTotals): string {
  const units = `${integer(totals.cost.total)} input-token units`
  return totals.costUsd === null ? units : `${usd(totals.costUsd)} (${units})`
}

/** What the price profile charges, in one sentence (`warmfold bench`'s legend has it too). */
export function priceText(price: PriceProfile): string {
  const rate =
    price.usdPerMillionInput === null
      ? 'no dollar rate'
      : `$${price.usdPerMillionInput.toFixed(2)} per million uncached input tokens`
  return (
    `${price.name}: a cache read costs ${price.cacheRead}×, a cache write ${price.cacheWrite}× and an ` +
    `output token ${price.output}× an uncached input token; ${rate}`
  )
}

/** `43: 41 conversation, 2 compaction (1 without usage)`. */
export function requestsText(totals: ReportTotals): string {
  const purposes = totals.purposes.map(([purpose, count]) => `${count} ${purpose}`).join(', ')
  const withoutUsage = totals.withoutUsage ? ` (${integer(totals.withoutUsage)} without usage)` : ''
  return `${integer(totals.requests)}${totals.requests ? `: ${purposes}` : ''}${withoutUsage}`
}

/** The request's numbers in one line (the hover text and the terminal use it). */
export function tokensText(request: ReportRequest): string {
  const { tokens, billed } = request
  if (!billed) return 'no usage in the log'
  const part = (value: number, raw: number | null, name: string) =>
    `${integer(value)} ${name}${raw === null ? ' (not reported)' : ''}`
  return (
    `prompt ${integer(billed.cached + billed.written + billed.uncached)} tokens: ` +
    `${part(billed.cached, tokens.cached, 'cached')}, ${part(billed.written, tokens.written, 'written')}, ` +
    `${part(billed.uncached, tokens.uncached, 'uncached')}; output ` +
    `${part(billed.output, tokens.output, 'tokens')}`
  )
}

/**
 * Prefilled tokens: those the request did not read from the cache (written and uncached), as `warmfold bench` counts
 * them; `no usage` without numbers.
 */
export function prefilledText({ billed }: ReportRequest): string {
  return billed ? integer(billed.written + billed.uncached) : 'no usage'
}

/** Where a report's numbers come from, in a few words. */
export function sourceText(source: 'ledger' | 'usage' | 'proxy'): string {
  if (source === 'ledger') return 'the cache ledger'
  if (source === 'proxy') return "a warmfold proxy log (provider usage, the proxy's breaks)"
  return 'provider usage (no cache ledger in this log)'
}
