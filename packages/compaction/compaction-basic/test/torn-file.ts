import { readFile, truncate } from 'node:fs/promises'

/** A stored JSONL line, parsed. */
export interface StoredLine {
  readonly seq: number
  readonly type: string
  readonly data: Record<string, unknown>
  /** The surface operation, for events that change the surface. */
  readonly surface?: { readonly op: string }
}

/**
 * Cuts `file` in the middle of its line `index` (0-based), as a crash mid-write would, and
 * returns the lines kept whole, parsed.
 */
export async function tearLine(file: string, index: number): Promise<StoredLine[]> {
  const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean)
  if (index < 0 || index >= lines.length) throw new Error(`tearLine: ${file} has no line ${index}`)
  const offset = Buffer.byteLength(
    lines
      .slice(0, index)
      .map((line) => `${line}\n`)
      .join(''),
  )
  await truncate(file, offset + Math.floor(Buffer.byteLength(lines[index]!) / 2))
  return lines.slice(0, index).map((line) => JSON.parse(line) as StoredLine)
}

/** Cuts `file` in the middle of its first line of event `type`; returns the lines kept whole. */
export async function tearFirst(file: string, type: string): Promise<StoredLine[]> {
  const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean)
  const index = lines.findIndex((line) => (JSON.parse(line) as StoredLine).type === type)
  if (index < 0) throw new Error(`tearFirst: no ${type} line in ${file}`)
  return tearLine(file, index)
}
