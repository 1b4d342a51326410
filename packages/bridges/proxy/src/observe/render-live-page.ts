import type { Cost } from './exchange-record.ts'
import type { LiveSnapshot } from './live-state.ts'

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** `text` safe inside HTML text and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] as string)
}

/** A whole number with thousands separators (`format` is bound to its formatter). */
const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }).format

function percent(value: number | null): string {
  return value === null ? '—' : `${(value * 100).toFixed(1)} %`
}

/** Dollars when the price has a rate, else input-token units; `—` without prices or usage. */
function money(cost: Cost | null): string {
  if (!cost) return '—'
  return cost.usd === null ? `${count(cost.units)} input-token units` : `$${cost.usd.toFixed(4)}`
}

function sum(units: number | null, usd: number | null): string {
  return units === null ? '—' : money({ units, usd })
}

function cells(row: readonly string[], tag: string): string {
  return row.map((cell) => `<${tag}>${cell}</${tag}>`).join('')
}

function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>, empty: string): string {
  if (!rows.length) return `<p class="empty">${escapeHtml(empty)}</p>`
  return `<table><thead><tr>${cells(head.map(escapeHtml), 'th')}</tr></thead><tbody>${rows
    .map((row) => `<tr>${cells(row, 'td')}</tr>`)
    .join('')}</tbody></table>`
}

/** The live page's `<main>`: totals, sessions, breaks, compactions, unreadable requests. Every text escaped. */
export function renderLiveMain(state: LiveSnapshot): string {
  const { totals } = state
  const e = escapeHtml
  const sessions = table(
    ['session', 'grouped by', 'agent', 'requests', 'hit rate', 'breaks', 'compactions', 'cost'],
    state.sessions.map((session) => [
      e(session.key),
      e(session.by),
      e(session.agent),
      count(session.requests),
      percent(session.hitRate),
      count(session.breaks),
      count(session.compactions),
      e(sum(session.cost, session.costUsd)),
    ]),
    'No session yet.',
  )
  const breaks = table(
    ['request', 'session', 'cause', 'first divergence', 'tokens prefilled again', 'cost', 'why', 'provider says'],
    state.breaks.map((item) => [
      `#${item.id}`,
      e(item.session),
      `<span class="cause">${e(item.cause)}</span>`,
      e(item.phrase),
      count(item.lostTokens),
      e(money(item.cost)),
      e(item.explanation),
      e(item.providerDiagnosis ?? '—'),
    ]),
    'No cache break.',
  )
  const compactions = table(
    ['request', 'session', 'agent', 'cost', 'first divergence', 'rewrite', 'what the rewrite saved'],
    state.compactions.map((item) => {
      const rewrite = item.rewrite
      const saved = rewrite
        ? `${count(rewrite.savedTokens)} prefilled tokens (${count(rewrite.predictedUncachedTokens.original)} → ` +
          `${count(rewrite.predictedUncachedTokens.rewritten)}); cached ${count(rewrite.predictedCachedTokens)} ` +
          `predicted, ${rewrite.reportedCachedTokens === null ? '—' : count(rewrite.reportedCachedTokens)} reported`
        : '—'
      const how = item.failOpen
        ? `failed open: ${item.failOpen}`
        : rewrite
          ? `${rewrite.sent === 'rewritten' ? 'sent warm' : 'dry run'} (${rewrite.recognition.agent})`
          : 'forwarded as sent'
      return [
        `#${item.id}`,
        e(item.session ?? '—'),
        e(item.agent),
        e(money(item.cost)),
        e(item.phrase ?? '—'),
        e(how),
        e(saved),
      ]
    }),
    'No compaction.',
  )
  const unreadable = state.unreadable.length
    ? `<h2>Unreadable requests</h2><ul>${state.unreadable
        .map((item) => `<li>#${item.id}: ${e(item.reason)}</li>`)
        .join('')}</ul>`
    : ''
  return [
    `<p class="totals">${count(totals.requests)} requests · hit rate ${percent(totals.hitRate)} ` +
      `(${count(totals.cacheReadTokens)} of ${count(totals.inputTokens)} input tokens read from the cache) · ` +
      `${count(totals.breaks)} breaks · ${count(totals.compactions)} compactions · cost ` +
      `${e(sum(totals.cost, totals.costUsd))}${state.price ? ` at ${e(state.price)}` : ''}</p>`,
    `<h2>Sessions</h2>${sessions}`,
    `<h2>Cache breaks</h2>${breaks}`,
    `<h2>Compactions</h2>${compactions}`,
    unreadable,
    `<p class="stamp">as of ${e(new Date(state.at).toISOString())}</p>`,
  ].join('\n')
}

/** Re-fetches the page every 2 s and swaps in its `<main>` (no external asset; one renderer, the server's). */
const REFRESH = `(() => {
  const refresh = async () => {
    try {
      const response = await fetch(location.href, { cache: 'no-store' })
      if (!response.ok) return
      const next = new DOMParser().parseFromString(await response.text(), 'text/html').querySelector('main')
      if (next) document.querySelector('main').innerHTML = next.innerHTML
    } catch {}
  }
  setInterval(refresh, 2000)
})()`

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin-bottom:1em}th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;
vertical-align:top}th{background:#f2f2f2}.cause{font-weight:bold}.empty,.stamp{color:#777}`

/** The whole live page: `renderLiveMain` in a document that refreshes itself. */
export function renderLivePage(state: LiveSnapshot): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>warmfold proxy</title>
<noscript><meta http-equiv="refresh" content="2"></noscript>
<style>${STYLE}</style></head>
<body><h1>warmfold proxy</h1>
<main>${renderLiveMain(state)}</main>
<script>${REFRESH}</script>
</body></html>
`
}
