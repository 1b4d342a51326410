import type { ArtifactExtraction } from './artifact-extraction.ts'
import type { TrailSection } from './trail-sections.ts'
import { TRAIL_HEADING, TRAIL_TITLES } from './trail-sections.ts'

const SECTION_OF_TITLE: ReadonlyMap<string, TrailSection> = new Map(
  Object.entries(TRAIL_TITLES).map(([section, title]) => [title, section as TrailSection]),
)

/** An entry an earlier trail wrote, read back from the checkpoint that holds it. */
export interface CarriedEntry {
  readonly section: TrailSection
  /** The entry as it was written (an open problem with several errors spans several lines). */
  readonly line: string
  /** What the entry is about: its leading code span (a path, a command, a call's label), else its text. */
  readonly subject: string
}

/** The content of the code span `text` starts with (as `code()` in `trail-items.ts` writes one), or `undefined`. */
function leadingCodeSpan(text: string): string | undefined {
  let fence = 0
  while (text[fence] === '`') fence++
  if (fence === 0) return undefined
  for (let at = text.indexOf('`'.repeat(fence), fence); at >= 0; at = text.indexOf('`'.repeat(fence), at + 1)) {
    // The closing fence is a run of exactly `fence` backticks.
    if (text[at + fence] === '`') {
      while (text[at + fence] === '`') at++
      continue
    }
    const content = text.slice(fence, at)
    const padded =
      content.length >= 2 &&
      content.startsWith(' ') &&
      content.endsWith(' ') &&
      (content[1] === '`' || content.at(-2) === '`')
    return padded ? content.slice(1, -1) : content
  }
  return undefined
}

/**
 * The entries of the artifact trail at the end of `checkpointText` (the last `## Artifact
 * Trail`, the one warmfold appended after the summary: a summary that copied an earlier trail
 * holds one more), in the order they were written; none when it has no trail. The trail's
 * preamble and its "left out for space" note are not entries.
 */
export function carriedTrailEntries(checkpointText: string): CarriedEntry[] {
  const at = checkpointText.lastIndexOf(`\n${TRAIL_HEADING}\n`)
  const start = at >= 0 ? at + 1 : checkpointText.startsWith(`${TRAIL_HEADING}\n`) ? 0 : -1
  if (start < 0) return []
  const entries: { section: TrailSection; line: string; subject: string }[] = []
  let section: TrailSection | undefined
  for (const line of checkpointText.slice(start + TRAIL_HEADING.length + 1).split('\n')) {
    if (line.startsWith('### ')) {
      section = SECTION_OF_TITLE.get(line.slice(4).trim())
      continue
    }
    if (section === undefined) continue
    if (line.startsWith('- ')) {
      const text = line.slice(2)
      entries.push({ section, line, subject: leadingCodeSpan(text) ?? text })
    } else if (line.startsWith('  - ') && entries.at(-1)?.section === section) entries.at(-1)!.line += `\n${line}`
  }
  return entries
}

/** Per section, the subjects a carried entry gives way to: what this region records anew about it. */
export function supersededSubjects(
  extraction: Pick<ArtifactExtraction, 'artifacts'>,
  files: ReadonlyMap<string, unknown>,
  commands: ReadonlyMap<string, unknown>,
  /** The region's calls that have a result, by subject (a command, else the call's name and files). */
  problems: ReadonlyMap<string, unknown>,
  hostEntries: readonly string[],
): Record<TrailSection, ReadonlySet<string>> {
  const paths = new Set(files.keys())
  const regionPaths = new Set(paths)
  const sentences = new Set<string>()
  for (const artifact of extraction.artifacts) {
    if (artifact.class === 'path') regionPaths.add(artifact.text)
    else if (artifact.class === 'user-message') sentences.add(artifact.text)
  }
  return {
    filesChanged: paths,
    filesRead: paths,
    // A path this region names anyway is written by this region (a file line, or an other path).
    otherPaths: regionPaths,
    commands: new Set(commands.keys()),
    // A problem whose call ran again is decided by that run: still open, or solved.
    openProblems: new Set(problems.keys()),
    userConstraints: sentences,
    hostEntries: new Set(hostEntries),
  }
}
