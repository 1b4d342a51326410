import { classWord, escapeHtml } from './escape-html.ts'
import type { ReportMarker, ReportRequest, SessionReport } from './report-model.ts'
import { integer, tokensText } from './report-format.ts'

const LEFT = 68
const RIGHT = 28
/** Rows for fold and prune labels above the plot. */
const TOP = 44
const PLOT_HEIGHT = 260
/** Purpose marks and request numbers under the plot. */
const BOTTOM = 44
/** Height of the stand-in bar of a request without usage. */
const NO_USAGE_HEIGHT = 10

/**
 * The per-request stacked bar chart as inline SVG: one `g.request` per request (id
 * `request-N`) with a `rect.seg` per non-empty bucket (`cached`, `written`, `uncached`; a
 * `none` stand-in without usage) and a `<title>` as hover text; a triangle over each break, a
 * diamond under each request that is not a conversation request, and a `g.marker.fold` or
 * `g.marker.prune` line between the requests a rewrite was logged between. Every string from the
 * log is escaped.
 */
export function reportChartSvg(report: SessionReport): string {
  const count = report.requests.length
  const step = Math.min(36, Math.max(6, 900 / Math.max(count, 1)))
  const bar = Math.max(2, Math.round(step * 0.72))
  const width = Math.round(LEFT + count * step + RIGHT)
  const height = TOP + PLOT_HEIGHT + BOTTOM
  const max = niceCeiling(Math.max(1, ...report.requests.map((request) => (request.billed ? request.billed.cached + request.billed.written + request.billed.uncached : 0))))
  const y = (tokens: number) => TOP + PLOT_HEIGHT - (tokens / max) * PLOT_HEIGHT
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="Prompt tokens of each request: cached, written and uncached">`,
    '<defs><pattern id="no-usage" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#b9b9b9"/></pattern></defs>',
  ]
  for (let tick = 0; tick <= 4; tick++) {
    const value = (max / 4) * tick
    parts.push(`<line class="grid" x1="${LEFT}" x2="${width - RIGHT}" y1="${y(value)}" y2="${y(value)}"/><text class="axis" x="${LEFT - 8}" y="${y(value) + 4}" text-anchor="end">${compact(value)}</text>`)
  }
  parts.push(`<text class="axis" x="14" y="${TOP + PLOT_HEIGHT / 2}" transform="rotate(-90 14 ${TOP + PLOT_HEIGHT / 2})" text-anchor="middle">prompt tokens</text>`)
  const labelEvery = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000].find((every) => every * step >= 30) ?? 10000
  for (const request of report.requests) {
    const x = LEFT + (request.number - 1) * step + (step - bar) / 2
    parts.push(requestBar(request, x, bar, y))
    if (request.number % labelEvery === 0 || (request.number === 1 && labelEvery >= 5)) parts.push(`<text class="axis" x="${x + bar / 2}" y="${TOP + PLOT_HEIGHT + 32}" text-anchor="middle">${request.number}</text>`)
  }
  for (const marker of report.markers) parts.push(markerLine(marker, LEFT + marker.afterRequest * step))
  parts.push(`<line class="axis-line" x1="${LEFT}" x2="${width - RIGHT}" y1="${TOP + PLOT_HEIGHT}" y2="${TOP + PLOT_HEIGHT}"/>`)
  parts.push('</svg>')
  return parts.join('\n')
}

function requestBar(request: ReportRequest, x: number, bar: number, y: (tokens: number) => number): string {
  const base = y(0)
  const title = [`#${request.number} ${request.purpose}${request.route ? ` (${request.route})` : ''}, log line ${request.line}`, tokensText(request)]
  if (request.billed) title.push(`cost ${integer(request.billed.cost)} input-token units`)
  title.push(request.break ? `break (${request.break.cause}): ${request.break.explanation}` : request.detail)
  const segments: string[] = []
  if (request.billed) {
    let bottom = 0
    for (const [kind, tokens] of [['cached', request.billed.cached], ['written', request.billed.written], ['uncached', request.billed.uncached]] as const) {
      if (tokens <= 0) continue
      const top = y(bottom + tokens)
      segments.push(`<rect class="seg ${kind}" x="${x}" y="${top.toFixed(2)}" width="${bar}" height="${(y(bottom) - top).toFixed(2)}"/>`)
      bottom += tokens
    }
  } else {
    segments.push(`<rect class="seg none" x="${x}" y="${base - NO_USAGE_HEIGHT}" width="${bar}" height="${NO_USAGE_HEIGHT}" fill="url(#no-usage)"/>`)
  }
  const topOfBar = request.billed ? y(request.billed.cached + request.billed.written + request.billed.uncached) : base - NO_USAGE_HEIGHT
  const centre = x + bar / 2
  if (request.break) {
    const size = Math.min(6, Math.max(3, bar / 2))
    segments.push(`<path class="break-mark cause-${classWord(request.break.cause)}" d="M${centre - size} ${topOfBar - 3 - size * 1.6}h${size * 2}l${-size} ${size * 1.6}z"/>`)
  }
  if (request.purpose !== 'conversation') segments.push(`<path class="purpose-mark" d="M${centre} ${base + 6}l4 5l-4 5l-4 -5z"/>`)
  const hover = `<rect class="hover" x="${x - 1}" y="${TOP}" width="${bar + 2}" height="${PLOT_HEIGHT + 22}"/>`
  const cause = request.break ? ` data-cause="${escapeHtml(request.break.cause)}"` : ''
  return `<g class="request${request.break ? ' break' : ''}" id="request-${request.number}" data-request="${request.number}" data-purpose="${escapeHtml(request.purpose)}"${cause}><title>${escapeHtml(title.join('\n'))}</title>${hover}${segments.join('')}</g>`
}

function markerLine(marker: ReportMarker, x: number): string {
  const fold = marker.kind === 'fold'
  const what = fold
    ? `fold (log line ${marker.line}): a checkpoint replaced ${integer(marker.messages)} message(s), about ${integer(marker.tokens)} tokens`
    : `prune (from log line ${marker.line}): ${integer(marker.count)} tool result(s) shortened, about ${integer(marker.tokens)} tokens replaced`
  const label = fold ? 'fold' : `prune${marker.count > 1 ? ` ×${marker.count}` : ''}`
  const labelY = fold ? 14 : 30
  return `<g class="marker ${marker.kind}" data-after-request="${marker.afterRequest}"><title>${escapeHtml(`${what}; between request #${marker.afterRequest} and #${marker.afterRequest + 1}`)}</title><line x1="${x}" x2="${x}" y1="${labelY + 4}" y2="${TOP + PLOT_HEIGHT}"/><text x="${x + 3}" y="${labelY}">${label}</text></g>`
}

/** The smallest 1, 2, 4 or 5 × 10^n at or above `value`, so the four axis ticks are round numbers. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value))
  for (const factor of [1, 2, 4, 5, 10]) if (factor * power >= value) return factor * power
  return 10 * power
}

/** `0`, `950`, `12k`, `1.5M`. */
function compact(value: number): string {
  if (value >= 1e6) return `${Number((value / 1e6).toFixed(2))}M`
  if (value >= 1e3) return `${Number((value / 1e3).toFixed(1))}k`
  return String(Math.round(value))
}
