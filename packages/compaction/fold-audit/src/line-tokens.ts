import type { ArtifactClass } from './artifact.ts'
import type { ArtifactSink } from './masked-line.ts'
import { scanLine } from './scan-line.ts'
import type { ScanBudget } from './scanned-lines.ts'

export type { ArtifactSink } from './masked-line.ts'

/** What a path scan needs to know besides the line. */
export interface LineTokenOptions {
  readonly workspaceRoot?: string
  /** Lines scanned before with the same `workspaceRoot`, replayed instead of scanned again. */
  readonly lineCache?: LineCache
  /** What is left to read of the message the lines come from (`scannedLines`). */
  readonly budget?: ScanBudget
}

/** What a scan of one line found, in order; the scan is pure, so a line seen again replays it. */
type LineArtifacts = readonly (readonly [ArtifactClass, string])[]

/** How many scanned lines a {@link LineCache} keeps for replay before it starts over. */
export const LINE_CACHE_LIMIT = 50_000

/**
 * Lines already scanned under one workspace root (an `ArtifactExtractor` holds one). Agents
 * re-read the same files and re-run the same commands, so a session repeats many of its lines
 * (the audit bench's coding session: about half of its characters). Bounded: it is cleared once
 * it holds {@link LINE_CACHE_LIMIT} lines.
 */
export class LineCache {
  private readonly lines = new Map<string, LineArtifacts>()

  get(line: string): LineArtifacts | undefined {
    return this.lines.get(line)
  }

  set(line: string, found: LineArtifacts): void {
    if (this.lines.size >= LINE_CACHE_LIMIT) this.lines.clear()
    this.lines.set(line, found)
  }

  /** Forgets every line (a line may keep the whole text it was split from alive). */
  clear(): void {
    this.lines.clear()
  }
}

/**
 * Finds the token-like artifacts of one line: URLs, paths, identifiers and numbers with units,
 * in that order of precedence (what one class takes, the next ones do not see again). With
 * `options.lineCache`, a line scanned before is replayed from it.
 */
export function scanLineTokens(line: string, sink: ArtifactSink, options: LineTokenOptions = {}): void {
  const cache = options.lineCache
  const known = cache?.get(line)
  if (known) {
    for (const [artifactClass, text] of known) sink(artifactClass, text)
    return
  }
  if (cache === undefined) return scanLine(line, sink, options.workspaceRoot)
  const found: (readonly [ArtifactClass, string])[] = []
  scanLine(line, (artifactClass, text) => void found.push([artifactClass, text]), options.workspaceRoot)
  cache.set(line, found)
  for (const [artifactClass, text] of found) sink(artifactClass, text)
}
