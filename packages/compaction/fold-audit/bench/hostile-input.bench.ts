import type { Message } from '@warmfold/llm'
import { createToolResultMessage, createUserMessage } from '@warmfold/llm'
import { bench, describe } from 'vitest'
import { ArtifactExtractor, auditFold, buildArtifactTrail } from '../src/index.ts'

// The wall clock of the fold audit on the tool results that blocked a host for seconds to
// minutes (issue [4.2], item 1): reading one message (what the engine's read-ahead does for
// every logged message) at 16k to 256k characters, and a fold's audit work (read, merge, trail,
// audit) for a listing of 100,000 and 200,000 paths. One bench per case, so a slow one can be
// left out with `-t`.

/** `unit` repeated to `length` characters after `prefix`. */
const grown = (prefix: string, unit: string, length: number): string =>
  prefix + unit.repeat(Math.ceil((length - prefix.length) / unit.length)).slice(0, length - prefix.length)

const numbers = (length: number): string => {
  let text = '['
  for (let index = 0; text.length < length - 1; index++) text += `${index === 0 ? '' : ','}${(index * 0.618) % 1}`
  return `${text}]`
}

const FAMILIES: Record<string, (length: number) => string> = {
  'a JSON array of numbers': numbers,
  'a URL followed by closing brackets': (length) => grown('see https://example.com/a', ')', length),
  'a run of dots in a URL': (length) => `${grown('https://example.com/', '.', length - 1)}a`,
  'a////b/': (length) => `${grown('a', '/', length - 2)}b/`,
  'Error: , , , x': (length) => `${grown('Error: ', ', ', length - 1)}x`,
}
const SIZES = [16_000, 32_000, 64_000, 128_000, 256_000]
const options = { iterations: 3, time: 0, warmupIterations: 1, warmupTime: 0 }

describe('read one tool result', () => {
  for (const [family, make] of Object.entries(FAMILIES)) {
    for (const size of SIZES) {
      const message = Object.freeze(createToolResultMessage('call-1', make(size)))
      bench(`${family}, ${size / 1000}k`, () => void new ArtifactExtractor().read(message), options)
    }
  }
})

describe("a fold's audit work on a path listing", () => {
  for (const paths of [100_000, 200_000]) {
    let listing = ''
    for (let index = 0; index < paths; index++) listing += `src/module-${index % 97}/part-${index}/file-${index}.ts\n`
    const region = [{ seq: 0, message: Object.freeze(createToolResultMessage('call-1', listing)) as Message }]
    bench(
      `${paths / 1000}k paths (${(listing.length / 1e6).toFixed(1)} MB): read, merge, trail, audit`,
      () => {
        const extraction = new ArtifactExtractor().extract(region)
        const trail = buildArtifactTrail(extraction)
        auditFold({
          folded: extraction.artifacts,
          checkpointText: trail.text,
          visibleAfter: [createUserMessage('Go on.')],
        })
      },
      options,
    )
  }
})
