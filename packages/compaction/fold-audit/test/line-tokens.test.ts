import { describe, expect, it } from 'vitest'
import type { ArtifactClass } from '../src/artifact.ts'
import { LINE_CACHE_LIMIT, scanLineTokens } from '../src/line-tokens.ts'

function scan(line: string, workspaceRoot?: string): (readonly [ArtifactClass, string])[] {
  const found: (readonly [ArtifactClass, string])[] = []
  scanLineTokens(line, (artifactClass, text) => void found.push([artifactClass, text]), workspaceRoot === undefined ? {} : { workspaceRoot })
  return found
}

describe('scanLineTokens replays a line it has scanned', () => {
  const line = 'src/cart/index.ts:42:7 - error TS2322 (see https://example.com/docs/x.html) in 412ms, react@18.2.0 GH-1198'

  it('gives the same artifacts, in the same order, the second time', () => {
    const first = scan(line)
    expect(first.map(([artifactClass]) => artifactClass)).toEqual(expect.arrayContaining(['path', 'url', 'number', 'identifier']))
    expect(scan(line)).toEqual(first)
  })

  it('keeps a line scanned under another workspace root apart', () => {
    const root = '/home/dev/project'
    const absolute = `${root}/src/cart/index.ts:42 failed`
    const outside = scan(absolute)
    const inside = scan(absolute, root)
    expect(inside).toContainEqual(['path', 'src/cart/index.ts'])
    expect(outside).not.toEqual(inside)
    expect(scan(absolute)).toEqual(outside)
    expect(scan(absolute, root)).toEqual(inside)
  })

  it('still scans right after the cache started over (it is bounded)', () => {
    const before = scan(line)
    for (let index = 0; index <= LINE_CACHE_LIMIT; index++) scan(`line ${index}`)
    expect(scan(line)).toEqual(before)
  })
})
