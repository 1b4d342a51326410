/** Whether a checkpoint has the shape its instruction asked for, and how big it is next to the one before. */
export interface CheckpointHealth {
  /** The required sections the checkpoint has a heading for, in the order they were required. */
  readonly sectionsPresent: readonly string[]
  /** The required sections it has no heading for. */
  readonly sectionsMissing: readonly string[]
  /**
   * Required sections whose heading has nothing under it (`(none)` counts as something: the
   * instruction asks for it).
   */
  readonly sectionsEmpty: readonly string[]
  /**
   * `true` when the summary call stopped at its output cap (`finishReason` `max-tokens`), `false`
   * for any other finish reason, `null` when none was given.
   */
  readonly truncated: boolean | null
  /** Characters of the checkpoint text. */
  readonly characters: number
  /** Characters of the previous checkpoint, `null` without one. */
  readonly previousCharacters: number | null
  /**
   * `characters / previousCharacters` (a collapse shows as a small ratio), `null` without a
   * previous checkpoint or when it was empty.
   */
  readonly sizeRatioToPrevious: number | null
}

/** A heading: Markdown (`## Goal`), or a line that is all bold (`**Goal:**`). */
const HEADING = /^\s{0,3}(?:#{1,6}\s+(.*?)\s*#*\s*|\*\*(.+?)\*\*:?\s*)$/

/** A section name as compared: without leading `#`, trailing `:`, case and extra white space. */
function sectionKey(name: string): string {
  return name
    .replace(/^\s*#+\s*/, '')
    .replace(/[\s:]+$/, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
}

/**
 * Checks `checkpointText` against the sections its instruction requires (`'Goal and Intent'`
 * or `'## Goal and Intent'`; matched case-insensitively against Markdown headings of any level
 * and all-bold lines), the finish reason of the summary call and the previous checkpoint's size.
 */
export function checkpointHealth(
  checkpointText: string,
  options: {
    readonly requiredSections?: readonly string[]
    readonly previousCheckpoint?: string
    readonly finishReason?: string
  } = {},
): CheckpointHealth {
  const lines = checkpointText.split('\n')
  const headings: { key: string; line: number }[] = []
  for (const [index, line] of lines.entries()) {
    const match = HEADING.exec(line)
    if (match) headings.push({ key: sectionKey(match[1] ?? match[2] ?? ''), line: index })
  }
  const present: string[] = []
  const missing: string[] = []
  const empty: string[] = []
  for (const section of options.requiredSections ?? []) {
    if (typeof section !== 'string' || sectionKey(section) === '')
      throw new TypeError(`auditFold: requiredSections holds ${JSON.stringify(section)}, which names no section`)
    const at = headings.findIndex((heading) => heading.key === sectionKey(section))
    if (at < 0) {
      missing.push(section)
      continue
    }
    present.push(section)
    const end = headings[at + 1]?.line ?? lines.length
    if (lines.slice(headings[at]!.line + 1, end).every((line) => line.trim() === '')) empty.push(section)
  }
  const previous = options.previousCheckpoint
  return {
    sectionsPresent: present,
    sectionsMissing: missing,
    sectionsEmpty: empty,
    truncated:
      options.finishReason === undefined
        ? null
        : options.finishReason === 'max-tokens' || options.finishReason === 'length',
    characters: checkpointText.length,
    previousCharacters: previous === undefined ? null : previous.length,
    sizeRatioToPrevious:
      previous === undefined || previous.length === 0 ? null : checkpointText.length / previous.length,
  }
}
