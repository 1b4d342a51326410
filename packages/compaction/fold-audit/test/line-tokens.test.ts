import { describe, expect, it } from 'vitest'
import type { ArtifactClass } from '../src/artifact.ts'
import { LINE_CACHE_LIMIT, LineCache, scanLineTokens } from '../src/line-tokens.ts'

function scan(line: string, lineCache?: LineCache, workspaceRoot?: string): (readonly [ArtifactClass, string])[] {
  const found: (readonly [ArtifactClass, string])[] = []
  scanLineTokens(line, (artifactClass, text) => void found.push([artifactClass, text]), {
    ...(workspaceRoot === undefined ? {} : { workspaceRoot }),
    ...(lineCache === undefined ? {} : { lineCache }),
  })
  return found
}

describe('scanLineTokens replays a line its cache holds', () => {
  const line =
    'src/cart/index.ts:42:7 - error TS2322 (see https://example.com/docs/x.html) in 412ms, react@18.2.0 GH-1198'

  it('gives the same artifacts, in the same order, from the cache as from a scan', () => {
    const cache = new LineCache()
    const first = scan(line, cache)
    expect(first.map(([artifactClass]) => artifactClass)).toEqual(
      expect.arrayContaining(['path', 'url', 'number', 'identifier']),
    )
    expect(cache.get(line)).toEqual(first)
    expect(scan(line, cache)).toEqual(first)
    expect(scan(line)).toEqual(first)
  })

  it('replays what the cache holds for a line, which is what makes a cache per workspace root necessary', () => {
    const root = '/home/dev/project'
    const absolute = `${root}/src/cart/index.ts:42 failed`
    const rooted = new LineCache()
    expect(scan(absolute, rooted, root)).toContainEqual(['path', 'src/cart/index.ts'])
    expect(scan(absolute)).toContainEqual(['path', `${root}/src/cart/index.ts`])
    expect(scan(absolute, rooted, root)).toEqual(rooted.get(absolute))
  })

  it('still scans right after the cache started over (it is bounded)', () => {
    const cache = new LineCache()
    const before = scan(line, cache)
    for (let index = 0; index <= LINE_CACHE_LIMIT; index++) scan(`line ${index}`, cache)
    expect(cache.get(line)).toBeUndefined()
    expect(scan(line, cache)).toEqual(before)
  })
})

const paths = (line: string): string[] =>
  scan(line)
    .filter(([artifactClass]) => artifactClass === 'path')
    .map(([, text]) => text)

describe('scanLineTokens finds paths in runs of token characters', () => {
  it('takes a word only as a well-known file name, trailing dashes off, and never next to a glob star', () => {
    expect(paths('edit Makefile and Dockerfile-- then LICENSE, not makefile or Makefiles')).toEqual([
      'Makefile',
      'Dockerfile',
      'LICENSE',
    ])
    expect(paths('*Makefile Makefile* gradlew')).toEqual(['gradlew'])
  })

  it('reads a run as one token whatever surrounds it: punctuation, quotes, non-ASCII text, the ends of the line', () => {
    expect(paths('src/a.ts')).toEqual(['src/a.ts'])
    expect(paths('«src/a.ts» (./lib/b.js), "~/notes.md";→/tmp/x.log')).toEqual([
      'src/a.ts',
      'lib/b.js',
      '~/notes.md',
      '/tmp/x.log',
    ])
    // é is no token character: the run starts at its slash.
    expect(paths('café/src/a.ts')).toEqual(['/src/a.ts'])
    expect(scan('pkg@1.2.3/index.js+x')).toEqual([['identifier', 'pkg@1.2.3']])
  })
})
