import { describe, expect, it } from 'vitest'
import { pathFromToken } from '../src/path-rules.ts'

describe('pathFromToken on words without a slash, dot, colon or tilde', () => {
  it('takes a well-known file name, also with trailing dashes, and nothing else', () => {
    expect(['Makefile', 'Dockerfile--', 'LICENSE', 'gradlew'].map((token) => pathFromToken(token, ' ', ' '))).toEqual([
      'Makefile',
      'Dockerfile',
      'LICENSE',
      'gradlew',
    ])
    expect(
      ['makefile', 'budget', 'handle3x0', '@types', '---', 'README_old'].map((token) => pathFromToken(token, ' ', ' ')),
    ).toEqual([undefined, undefined, undefined, undefined, undefined, undefined])
  })

  it('leaves a glob alone and reads the same names with a path sign by the full rules', () => {
    expect(pathFromToken('Makefile', '*', ' ')).toBeUndefined()
    expect(pathFromToken('./Makefile', ' ', ' ')).toBe('Makefile')
    expect(pathFromToken('src/Makefile', ' ', ' ')).toBe('src/Makefile')
    expect(pathFromToken('docker/Dockerfile', ' ', ' ')).toBeUndefined()
  })
})

describe('pathFromToken on words whose only dots end them', () => {
  it('takes a well-known file name that ends a sentence, and no other word', () => {
    expect(
      ['Makefile.', 'LICENSE...', 'Dockerfile-.', 'gradlew.'].map((token) => pathFromToken(token, ' ', '')),
    ).toEqual(['Makefile', 'LICENSE', 'Dockerfile', 'gradlew'])
    expect(
      ['done.', '5003.', 'times...', 'README_old.', '@types.', 'x-.'].map((token) => pathFromToken(token, ' ', '')),
    ).toEqual([undefined, undefined, undefined, undefined, undefined, undefined])
  })

  it('reads a word with a dot before its end by the full rules', () => {
    expect(pathFromToken('index.ts.', ' ', '')).toBe('index.ts')
    expect(pathFromToken('.env.', ' ', '')).toBe('.env')
    expect(pathFromToken('a.-.', ' ', '')).toBeUndefined()
    expect(pathFromToken('..', ' ', '')).toBeUndefined()
    expect(pathFromToken('Node.js.', ' ', '')).toBeUndefined()
  })
})
