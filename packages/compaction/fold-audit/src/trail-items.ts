import type { Artifact } from './artifact.ts'
import type { ArtifactExtraction, ToolCallRecord } from './artifact-extraction.ts'
import { artifactKey } from './artifact-collector.ts'
import { occursAsWord } from './occurs-as-word.ts'
import type { CarriedEntry } from './trail-carry.ts'
import { supersededSubjects } from './trail-carry.ts'
import type { TrailSection } from './trail-sections.ts'

/** One line of the trail, with what decides when the budget cuts it. */
export interface TrailItem {
  readonly section: TrailSection
  readonly line: string
  /** How often the region refers to it (fewer: cut earlier). */
  readonly references: number
  /** Its newest seq (older: cut earlier). */
  readonly seq: number
  /** Its first seq: the order within the section. */
  readonly firstSeq: number
  /** Taken from the trail of the checkpoint this fold replaces. */
  readonly carried?: true
  /** The `artifactKey` of the artifact whose exact text the line writes, if it writes one. */
  readonly artifact?: string
}

/**
 * Words that mark a sentence of the user as a constraint or a correction: a prohibition or an
 * obligation (`don't`, `never`, `must`, `only`, `keep`, `avoid`, `instead`, `not`) or the opening
 * of a correction (`no,`, `actually`, `wait`, `wrong`).
 */
const CONSTRAINT = new RegExp(
  String.raw`\b(?:do not|don'?t|don’t|never|always|must(?:n'?t)?|should(?:n'?t)?|only|instead|avoid|keep|` +
    String.raw`make sure|no longer|not|prefer|rather than|stop|without|except|skip|leave)\b|^(?:no\b|` +
    String.raw`actually\b|wait\b|wrong\b|that'?s (?:not|wrong))`,
  'i',
)

/** Error headlines an open problem lists at most. */
const MAX_PROBLEM_ERRORS = 3

/** `text` as a Markdown code span, with a fence longer than any backtick run inside it. */
function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length))
  const fence = '`'.repeat(longest + 1)
  const padded = text.startsWith('`') || text.endsWith('`') ? ` ${text} ` : text
  return `${fence}${padded}${fence}`
}

/**
 * What a problem is about: the command the call ran, else its name and the files it named, else its
 * arguments (at most 120 characters); the trail writes it as a code span.
 */
function callSubject(call: ToolCallRecord): string {
  if (call.command !== undefined) return call.command
  const detail = call.paths.length > 0 ? call.paths.join(' ') : call.arguments.replace(/\s+/g, ' ').slice(0, 120)
  return `${call.name} ${detail}`.trim()
}

function failed(call: ToolCallRecord): boolean {
  const result = call.result
  return result !== undefined && (result.isError || (result.exitCode !== undefined && result.exitCode !== 0))
}

function status(call: ToolCallRecord): string {
  const result = call.result
  if (result === undefined) return ''
  if (result.exitCode !== undefined) return ` → exit ${result.exitCode}`
  return result.isError ? ' → failed' : ' → ok'
}

/** The item of `line`, which writes `artifact` exactly: referenced as often as the region mentions it. */
function artifactItem(section: TrailSection, line: string, artifact: Artifact): TrailItem {
  const { mentions: references, seq, firstSeq } = artifact
  return { section, line, references, seq, firstSeq, artifact: artifactKey(artifact.class, artifact.text) }
}

/**
 * Every item the trail could write for a region, in no particular order: its files (each with the
 * last call that named it), commands (each once, with its last status), open problems, the
 * user's constraints, the entries carried from an earlier trail that the region has nothing newer
 * for, every other path the region named, and the host's lines.
 */
export function trailItems(
  extraction: Pick<ArtifactExtraction, 'artifacts' | 'toolCalls'>,
  hostEntries: readonly string[],
  carried: readonly CarriedEntry[],
): TrailItem[] {
  const mentions = new Map<string, Artifact>()
  for (const artifact of extraction.artifacts)
    if (artifact.class === 'path' || artifact.class === 'command')
      mentions.set(artifactKey(artifact.class, artifact.text), artifact)
  const list: TrailItem[] = []

  // Files: the last call that named each one decides its section and its action.
  const files = new Map<string, { call: ToolCallRecord; calls: number; firstSeq: number; changed: boolean }>()
  for (const call of extraction.toolCalls) {
    for (const path of call.paths) {
      const entry = files.get(path)
      const changed = (entry?.changed ?? false) || call.fileAction === 'changed'
      files.set(path, { call, calls: (entry?.calls ?? 0) + 1, firstSeq: entry?.firstSeq ?? call.seq, changed })
    }
  }
  // A file an earlier fold changed stays changed, whatever this region did with it.
  const changedBefore = new Set(
    carried.filter((entry) => entry.section === 'filesChanged').map((entry) => entry.subject),
  )
  for (const [path, entry] of files) {
    const artifact = artifactKey('path', path)
    const references = mentions.get(artifact)?.mentions ?? entry.calls
    list.push({
      section: entry.changed || changedBefore.has(path) ? 'filesChanged' : 'filesRead',
      line: `- ${code(path)} (${entry.call.name})`,
      references,
      seq: entry.call.seq,
      firstSeq: entry.firstSeq,
      artifact,
    })
  }

  // Commands: each once, with the status of its last run.
  const commands = new Map<string, { last: ToolCallRecord; runs: number; firstSeq: number }>()
  for (const call of extraction.toolCalls) {
    if (call.command === undefined) continue
    const entry = commands.get(call.command)
    commands.set(call.command, { last: call, runs: (entry?.runs ?? 0) + 1, firstSeq: entry?.firstSeq ?? call.seq })
  }
  for (const [command, entry] of commands) {
    const runs = entry.runs > 1 ? ` (${entry.runs} runs)` : ''
    const artifact = artifactKey('command', command)
    list.push({
      section: 'commands',
      line: `- ${code(command)}${status(entry.last)}${runs}`,
      references: Math.max(entry.runs, mentions.get(artifact)?.mentions ?? 0),
      seq: entry.last.seq,
      firstSeq: entry.firstSeq,
      artifact,
    })
  }

  // Open problems: a command (or a call, by its subject) whose last run in the region failed, with
  // that run's first error.
  const problems = new Map<string, { last: ToolCallRecord; runs: number; firstSeq: number }>()
  for (const call of extraction.toolCalls) {
    if (call.result === undefined) continue
    const key = callSubject(call)
    const entry = problems.get(key)
    problems.set(key, { last: call, runs: (entry?.runs ?? 0) + 1, firstSeq: entry?.firstSeq ?? call.seq })
  }
  for (const [subject, entry] of problems) {
    if (!failed(entry.last)) continue
    const label = code(subject)
    const result = entry.last.result!
    // Every error headline of the failing run (a test run reports the failed test and its
    // assertion), up to MAX_PROBLEM_ERRORS.
    const errors =
      result.errors.length > 0
        ? [...new Set(result.errors)].slice(0, MAX_PROBLEM_ERRORS)
        : [result.exitCode !== undefined ? `exit ${result.exitCode}` : 'failed']
    const line =
      errors.length === 1
        ? `- ${label}: ${errors[0]}`
        : [`- ${label}:`, ...errors.map((error) => `  - ${error}`)].join('\n')
    list.push({ section: 'openProblems', line, references: entry.runs, seq: entry.last.seq, firstSeq: entry.firstSeq })
  }

  // The user's constraints and corrections, verbatim.
  for (const artifact of extraction.artifacts)
    if (artifact.class === 'user-message' && CONSTRAINT.test(artifact.text))
      list.push(artifactItem('userConstraints', `- ${artifact.text}`, artifact))
  // What earlier trails recorded, unless this region has something newer about it: older than
  // anything of the region's and referenced by none of it, in the order they were written.
  const newer = supersededSubjects(extraction, files, commands, problems, hostEntries)
  const kept = carried.filter((entry) => !newer[entry.section].has(entry.subject))
  for (const [index, entry] of kept.entries())
    list.push({
      section: entry.section,
      line: entry.line,
      references: 0,
      seq: index - kept.length,
      firstSeq: index - kept.length,
      carried: true,
    })
  // Paths no line above names (a compiler error's file, a search hit, a path the user typed): cut
  // first, they are on disk.
  // One text of every line above: a path holds no line break, so a match never spans two lines.
  const written = list.map((item) => item.line).join('\n')
  const paths = extraction.artifacts.filter((artifact) => artifact.class === 'path')
  for (const artifact of paths)
    if (!occursAsWord(written, artifact.text))
      list.push(artifactItem('otherPaths', `- ${code(artifact.text)}`, artifact))
  // The host's own lines, in the order it added them (the later ones count as newer).
  for (const [index, entry] of hostEntries.entries())
    list.push({
      section: 'hostEntries',
      line: `- ${entry}`,
      references: 1,
      seq: Number.MAX_SAFE_INTEGER - hostEntries.length + index,
      firstSeq: index,
    })
  return list
}
