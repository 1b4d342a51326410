import { classWord, escapeHtml } from './escape-html.ts'
import type { ReportMarker, ReportRequest, SessionReport } from './report-model.ts'
import { integer, tokensText } from './report-format.ts'

const LEFT = 68
const RIGHT = 28
/**
 * Width of the chart's coordinate system when its requests fit: the page scales the chart to its
 * box (width 100%), so a short session fills the box as a long one does, with text scaled about
 * as much as the box differs from this (a 1,200-pixel box: 1.1×).
 */
const NOMINAL_WIDTH = 1100
/** The narrowest slot of a request; a session with more requests than fit is drawn wider and scrolls. */
const MIN_STEP = 6
/** The widest bar, so a session of a few requests is not drawn as a few slabs. */
const MAX_BAR = 48
/** Baseline of the first row of fold and prune labels, and the height of each further row. */
const LABEL_FIRST_BASELINE = 14
const LABEL_ROW_HEIGHT = 16
/**
 * Width of one label character (11-pixel bold system font) used to keep labels apart, a little
 * more than the widest characters the labels use: labels are placed without measuring text.
 */
const LABEL_CHAR_WIDTH = 7
/** Room between the last label row and the plot, for a break's triangle over the tallest bar. */
const LABEL_CLEARANCE = 18
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
 * `g.marker.prune` line between the requests a rewrite was logged between, its label in a row of
 * its own where it would touch another label or line. Every string from the log is escaped. A
 * chart whose requests fit in {@link NOMINAL_WIDTH} (`svg.chart.fit`) has no size of its own and
 * fills the width of its box; a wider one (`svg.chart.wide`) keeps its size and scrolls.
 */
export function reportChartSvg(report: SessionReport): string {
  const count = report.requests.length
  const step = Math.max(MIN_STEP, (NOMINAL_WIDTH - LEFT - RIGHT) / Math.max(count, 1))
  const bar = Math.min(MAX_BAR, Math.max(2, Math.round(step * 0.72)))
  const labels = placeMarkerLabels(report.markers, (marker) => LEFT + marker.afterRequest * step)
  const plotTop = LABEL_FIRST_BASELINE + (Math.max(1, labels.rows) - 1) * LABEL_ROW_HEIGHT + LABEL_CLEARANCE
  const plotRight = LEFT + count * step
  const width = Math.round(Math.max(plotRight + RIGHT, labels.end + 4))
  const plotBottom = plotTop + PLOT_HEIGHT
  const height = plotBottom + BOTTOM
  const max = niceCeiling(
    Math.max(
      1,
      ...report.requests.map(({ billed }) => (billed ? billed.cached + billed.written + billed.uncached : 0)),
    ),
  )
  const y = (tokens: number) => plotBottom - (tokens / max) * PLOT_HEIGHT
  const wide = width > NOMINAL_WIDTH
  const parts: string[] = [
    // A chart that fits is scaled to its box (no width: the page's CSS gives it 100%); a wider one keeps its size and
    // scrolls.
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart ${wide ? 'wide' : 'fit'}"` +
      `${wide ? ` width="${width}" height="${height}"` : ''} viewBox="0 0 ${width} ${height}" role="img" ` +
      'aria-label="Prompt tokens of each request: cached, written and uncached">',
    '<defs><pattern id="no-usage" width="6" height="6" patternUnits="userSpaceOnUse" ' +
      'patternTransform="rotate(45)"><rect width="3" height="6" fill="#b9b9b9"/></pattern></defs>',
  ]
  for (let tick = 0; tick <= 4; tick++) {
    const value = (max / 4) * tick
    parts.push(
      `<line class="grid" x1="${LEFT}" x2="${plotRight}" y1="${y(value)}" y2="${y(value)}"/><text class="axis" ` +
        `x="${LEFT - 8}" y="${y(value) + 4}" text-anchor="end">${compact(value)}</text>`,
    )
  }
  parts.push(
    `<text class="axis" x="14" y="${plotTop + PLOT_HEIGHT / 2}" transform="rotate(-90 14 ` +
      `${plotTop + PLOT_HEIGHT / 2})" text-anchor="middle">prompt tokens</text>`,
  )
  const labelEvery = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000].find((every) => every * step >= 30) ?? 10000
  for (const request of report.requests) {
    const x = LEFT + (request.number - 1) * step + (step - bar) / 2
    parts.push(requestBar(request, x, bar, y, plotTop))
    if (request.number % labelEvery === 0 || (request.number === 1 && labelEvery >= 5))
      parts.push(
        `<text class="axis" x="${x + bar / 2}" y="${plotBottom + 32}" text-anchor="middle">${request.number}</text>`,
      )
  }
  for (const [index, marker] of report.markers.entries())
    parts.push(markerLine(marker, labels.placed[index] as PlacedLabel, plotTop))
  parts.push(`<line class="axis-line" x1="${LEFT}" x2="${plotRight}" y1="${plotBottom}" y2="${plotBottom}"/>`)
  parts.push('</svg>')
  return parts.join('\n')
}

function requestBar(
  request: ReportRequest,
  x: number,
  bar: number,
  y: (tokens: number) => number,
  plotTop: number,
): string {
  const base = y(0)
  const title = [
    `#${request.number} ${request.purpose}${request.route ? ` (${request.route})` : ''}, log line ${request.line}`,
    tokensText(request),
  ]
  if (request.billed) title.push(`cost ${integer(request.billed.cost)} input-token units`)
  title.push(request.break ? `break (${request.break.cause}): ${request.break.explanation}` : request.detail)
  const segments: string[] = []
  let topOfBar = base - NO_USAGE_HEIGHT
  if (request.billed) {
    let bottom = 0
    for (const [kind, tokens] of [
      ['cached', request.billed.cached],
      ['written', request.billed.written],
      ['uncached', request.billed.uncached],
    ] as const) {
      if (tokens <= 0) continue
      const top = y(bottom + tokens)
      segments.push(
        `<rect class="seg ${kind}" x="${x}" y="${top.toFixed(2)}" width="${bar}" ` +
          `height="${(y(bottom) - top).toFixed(2)}"/>`,
      )
      bottom += tokens
    }
    topOfBar = y(bottom)
  } else {
    segments.push(
      `<rect class="seg none" x="${x}" y="${base - NO_USAGE_HEIGHT}" width="${bar}" height="${NO_USAGE_HEIGHT}" ` +
        'fill="url(#no-usage)"/>',
    )
  }
  const centre = x + bar / 2
  if (request.break) {
    const size = Math.min(6, Math.max(3, bar / 2))
    segments.push(
      `<path class="break-mark cause-${classWord(request.break.cause)}" d="M${centre - size} ` +
        `${topOfBar - 3 - size * 1.6}h${size * 2}l${-size} ${size * 1.6}z"/>`,
    )
  }
  if (request.purpose !== 'conversation')
    segments.push(`<path class="purpose-mark" d="M${centre} ${base + 6}l4 5l-4 5l-4 -5z"/>`)
  const hover = `<rect class="hover" x="${x - 1}" y="${plotTop}" width="${bar + 2}" height="${PLOT_HEIGHT + 22}"/>`
  const cause = request.break ? ` data-cause="${escapeHtml(request.break.cause)}"` : ''
  return (
    `<g class="request${request.break ? ' break' : ''}" id="request-${request.number}" ` +
    `data-request="${request.number}" data-purpose="${escapeHtml(request.purpose)}"${cause}>` +
    `<title>${escapeHtml(title.join('\n'))}</title>${hover}${segments.join('')}</g>`
  )
}

/** A marker's line position and its label's row. */
interface PlacedLabel {
  readonly x: number
  readonly row: number
  readonly text: string
}

/** The text over a marker's line: `fold`, `prune`, `prune ×3`. */
function markerLabel(marker: ReportMarker): string {
  return marker.kind === 'fold' ? 'fold' : `prune${marker.count > 1 ? ` ×${marker.count}` : ''}`
}

/**
 * Rows for the marker labels, left to right, so that no two labels overlap and no marker's line
 * runs through another's label: a label starts just right of its line and its line runs from the
 * label down to the plot, so a label whose line falls under an earlier label's text (or too close
 * to its end) goes one row below that label. Rows are reused as soon as the labels above end.
 * Returns each marker's placement (in `markers` order), the number of rows and where the
 * rightmost label ends.
 */
function placeMarkerLabels(
  markers: readonly ReportMarker[],
  xOf: (marker: ReportMarker) => number,
): { placed: PlacedLabel[]; rows: number; end: number } {
  const gap = 6
  const spans: Array<{ row: number; end: number }> = []
  const placed = markers.map((marker): PlacedLabel => {
    const x = xOf(marker)
    const text = markerLabel(marker)
    const start = x + 3
    // Markers come in log order, so every earlier label starts at or left of this one.
    const row = spans.filter((span) => span.end + gap > start).reduce((below, span) => Math.max(below, span.row + 1), 0)
    spans.push({ row, end: start + text.length * LABEL_CHAR_WIDTH })
    return { x, row, text }
  })
  return {
    placed,
    rows: spans.reduce((rows, span) => Math.max(rows, span.row + 1), 0),
    end: spans.reduce((end, span) => Math.max(end, span.end), 0),
  }
}

function markerLine(marker: ReportMarker, label: PlacedLabel, plotTop: number): string {
  const what =
    marker.kind === 'fold'
      ? `fold (log line ${marker.line}): a checkpoint replaced ${integer(marker.messages)} message(s), about ` +
        `${integer(marker.tokens)} tokens`
      : `prune (from log line ${marker.line}): ${integer(marker.count)} tool result(s) shortened, about ` +
        `${integer(marker.tokens)} tokens replaced`
  const labelY = LABEL_FIRST_BASELINE + label.row * LABEL_ROW_HEIGHT
  const title = `${what}; between request #${marker.afterRequest} and #${marker.afterRequest + 1}`
  return (
    `<g class="marker ${marker.kind}" data-after-request="${marker.afterRequest}"><title>${escapeHtml(title)}</title>` +
    `<line x1="${label.x}" x2="${label.x}" y1="${labelY + 4}" y2="${plotTop + PLOT_HEIGHT}"/>` +
    `<text x="${label.x + 3}" y="${labelY}">${label.text}</text></g>`
  )
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
