import type { ArtifactExtraction } from './artifact-extraction.ts'
import { carriedTrailEntries } from './trail-carry.ts'
import type { TrailItem } from './trail-items.ts'
import { trailItems } from './trail-items.ts'
import type { TrailSection } from './trail-sections.ts'
import { TRAIL_HEADING, TRAIL_SECTIONS, TRAIL_TITLES, zeroCounts } from './trail-sections.ts'

export type { TrailSection } from './trail-sections.ts'

/** The default token budget of the trail: about 1,000 tokens, a few percent of a checkpoint's region. */
export const DEFAULT_TRAIL_TOKENS = 1000

/**
 * Which section loses its items first when the budget is short: other paths and files read (they
 * are still on disk), then commands, files changed, open problems, the user's own words, and what
 * the host added on purpose last.
 */
const CUT_TIER: Readonly<Record<TrailSection, number>> = {
  otherPaths: 0,
  filesRead: 1,
  commands: 2,
  filesChanged: 3,
  openProblems: 4,
  userConstraints: 5,
  hostEntries: 6,
}

/**
 * Where an item stands in the order of cutting, before references and age: entries carried from
 * an earlier trail are older than any of the region's, and go before all of them (in section
 * order among themselves), except the user's words and the host's lines, which stay the last
 * sections to lose anything (there, carried entries go first).
 */
function cutRank(item: TrailItem): number {
  const kept = item.section === 'userConstraints' || item.section === 'hostEntries'
  if (kept) return 100 + CUT_TIER[item.section] * 2 + (item.carried ? 0 : 1)
  return (item.carried ? 0 : 10) + CUT_TIER[item.section]
}

/** Options of {@link buildArtifactTrail}. */
export interface ArtifactTrailOptions {
  /** Token budget of the whole text (default {@link DEFAULT_TRAIL_TOKENS}). */
  readonly maxTokens?: number
  /**
   * The token estimate the budget is measured with (default: `Math.ceil(text.length / 4)`); an
   * engine passes its token meter's.
   */
  readonly estimateTokens?: (text: string) => number
  /**
   * Lines the host adds verbatim under "Noted by the host" (through the engine's
   * `compaction/after` hook): one line each, non-empty. They are the last to be cut.
   */
  readonly hostEntries?: readonly string[]
  /**
   * The text of the checkpoint this fold replaces (its summary and trail): the entries of its
   * trail are carried into this one, so what an earlier fold recorded does not depend on the
   * summaries that came after it. An entry this region has something newer for gives way to
   * it (a file or command the region touched again, a problem whose call ran again, the same
   * sentence); a file an earlier fold changed stays under "Files changed". Carried entries are
   * older than the region's, so they are cut before them (see `cutRank`).
   */
  readonly carryFrom?: string
}

/** A trail section: text ready to append to a checkpoint, and what the budget left out. */
export interface ArtifactTrail {
  /** The trail (format in the README's "The artifact trail"), `''` when it has nothing to say or nothing fits. */
  readonly text: string
  /** `estimateTokens(text)`. */
  readonly tokens: number
  /** Items written, per section. */
  readonly kept: Readonly<Record<TrailSection, number>>
  /** Items left out for the budget, per section. */
  readonly cut: Readonly<Record<TrailSection, number>>
  /** Items taken from the trail of `carryFrom` (kept or cut). */
  readonly carried: number
  /**
   * The region's artifacts whose exact text the trail wrote as an entry (a file, a command,
   * another path, a sentence of the user), by `artifactKey`: each stands between characters
   * that are not word characters (a code span's backticks, a line's start and end), so the
   * survival check finds it in the checkpoint without searching (`auditFold`'s
   * `writtenInCheckpoint`).
   */
  readonly written: ReadonlySet<string>
}

/** The note a cut trail ends with; with `widest`, the longest it can be for `widest` items, whatever was cut. */
function omissionNote(cut: Readonly<Record<TrailSection, number>>, widest?: number): string {
  const sections = widest === undefined ? TRAIL_SECTIONS.filter((section) => cut[section] > 0) : TRAIL_SECTIONS
  if (sections.length === 0) return ''
  const counts = sections.map((section) => `${widest ?? cut[section]} ${TRAIL_TITLES[section].toLowerCase()}`)
  return `(left out for space: ${counts.join(', ')})`
}

/** Items in the order the trail writes them: by section, then first seq, then line. */
function writingOrder(all: readonly TrailItem[]): TrailItem[] {
  const rank = new Map(TRAIL_SECTIONS.map((section, index) => [section, index]))
  return all.toSorted(
    (a, b) =>
      rank.get(a.section)! - rank.get(b.section)! ||
      a.firstSeq - b.firstSeq ||
      (a.line < b.line ? -1 : a.line > b.line ? 1 : 0),
  )
}

/** The trail of the `kept` items, which are in {@link writingOrder}. */
function render(kept: readonly TrailItem[], cut: Readonly<Record<TrailSection, number>>, widest?: number): string {
  if (kept.length === 0) return ''
  const lines = [TRAIL_HEADING, "(recorded from the tool calls and the user's messages by warmfold, not summarized)"]
  let section: TrailSection | undefined
  for (const item of kept) {
    if (item.section !== section) lines.push(`### ${TRAIL_TITLES[(section = item.section)]}`)
    lines.push(item.line)
  }
  const note = omissionNote(cut, widest)
  if (note !== '') lines.push(note)
  return lines.join('\n')
}

const defaultEstimate = (text: string): number => Math.ceil(text.length / 4)

function fail(message: string): never {
  throw new TypeError(`buildArtifactTrail: ${message}`)
}

/**
 * Writes the artifact trail of a folded region: a deterministic section (code, not a model)
 * that the engine appends to the checkpoint, listing the files changed and read (with the last
 * tool that touched each), the commands run (with the last exit status known), the open
 * problems (the first error of each command or call whose last run failed) and the user's
 * constraints and corrections verbatim, and every other path the region named, within
 * `maxTokens`, with the entries carried from the trail of `options.carryFrom`. When it does not
 * fit, items are left out in this order: section (other paths, files read, commands, files
 * changed, open problems, user constraints, the host's lines), then the least referenced, then
 * the oldest; carried entries before the region's own (see `cutRank`).
 * @throws TypeError for a budget that is not a positive integer, an estimate that is not a
 * function, or a `carryFrom` that is not a string.
 */
export function buildArtifactTrail(
  extraction: Pick<ArtifactExtraction, 'artifacts' | 'toolCalls'>,
  options: ArtifactTrailOptions = {},
): ArtifactTrail {
  const maxTokens = options.maxTokens ?? DEFAULT_TRAIL_TOKENS
  if (!Number.isSafeInteger(maxTokens) || maxTokens <= 0)
    fail(`maxTokens must be a positive integer, got ${JSON.stringify(options.maxTokens)}`)
  const estimate = options.estimateTokens ?? defaultEstimate
  if (typeof estimate !== 'function') fail(`estimateTokens must be a function, got ${typeof estimate}`)
  if (
    extraction === null ||
    typeof extraction !== 'object' ||
    !Array.isArray(extraction.artifacts) ||
    !Array.isArray(extraction.toolCalls)
  )
    fail('extraction must be what extractArtifacts returns ({ artifacts, toolCalls })')
  const hostEntries = options.hostEntries ?? []
  if (!Array.isArray(hostEntries)) fail(`hostEntries must be an array of strings, got ${typeof hostEntries}`)
  for (const [index, entry] of hostEntries.entries()) {
    if (typeof entry !== 'string' || entry.trim() === '' || /[\r\n]/.test(entry))
      fail(`hostEntries[${index}] must be one non-empty line, got ${JSON.stringify(entry)}`)
  }
  if (options.carryFrom !== undefined && typeof options.carryFrom !== 'string')
    fail(`carryFrom must be the text of the checkpoint this fold replaces, got ${typeof options.carryFrom}`)
  const all = writingOrder(
    trailItems(extraction, hostEntries, options.carryFrom === undefined ? [] : carriedTrailEntries(options.carryFrom)),
  )
  const removal = all.toSorted(
    (a, b) =>
      cutRank(a) - cutRank(b) ||
      a.references - b.references ||
      a.seq - b.seq ||
      (a.line < b.line ? -1 : a.line > b.line ? 1 : 0),
  )
  // Each item's place in the removal order: leaving out `count` items leaves out those placed below `count`.
  const place = new Map(removal.map((item, index) => [item, index]))
  const placed = all.map((item) => place.get(item)!)
  const renderWithout = (count: number, widest?: number): { text: string; cut: Record<TrailSection, number> } => {
    const cut = zeroCounts()
    const kept: TrailItem[] = []
    for (const [index, item] of all.entries()) {
      if (placed[index]! < count) cut[item.section]++
      else kept.push(item)
    }
    return { text: render(kept, cut, widest), cut }
  }
  // Everything, when it fits. Otherwise the fewest items to leave out, by binary search over the
  // removal order: measured with the widest note the trail could end with, the text only
  // shrinks as items go (the real note, which grows as sections are cut, would break that), and
  // the real note is never longer. Then back a step at a time while the real text still fits
  // (the slack is at most the note's width, a few items), and forward for an estimate that is
  // not monotone.
  // `low`: how many items are left out.
  let low = 0
  let chosen = renderWithout(0)
  if (estimate(chosen.text) > maxTokens) {
    low = 1
    let high = all.length
    while (low < high) {
      const middle = Math.floor((low + high) / 2)
      if (estimate(renderWithout(middle, all.length).text) <= maxTokens) high = middle
      else low = middle + 1
    }
    while (low > 1 && estimate(renderWithout(low - 1).text) <= maxTokens) low--
    chosen = renderWithout(low)
    while (chosen.text !== '' && estimate(chosen.text) > maxTokens && low < all.length) chosen = renderWithout(++low)
  }
  const text = estimate(chosen.text) <= maxTokens ? chosen.text : ''
  const cut = text === '' ? renderWithout(all.length).cut : chosen.cut
  const kept = zeroCounts()
  for (const item of all) kept[item.section]++
  for (const section of TRAIL_SECTIONS) kept[section] -= cut[section]
  const written = new Set<string>()
  if (text !== '')
    for (const [index, item] of all.entries())
      if (placed[index]! >= low && item.artifact !== undefined) written.add(item.artifact)
  return {
    text,
    tokens: text === '' ? 0 : estimate(text),
    kept,
    cut,
    carried: all.filter((item) => item.carried).length,
    written,
  }
}
