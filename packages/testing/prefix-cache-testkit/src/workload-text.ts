const SYLLABLES = 'ka lo mi ne ru sa ti vo xe zu bra cle dri fro glu pha qui sty tre wha'.split(' ')

/** A small deterministic PRNG (mulberry32). */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let value = state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * `length` characters of seeded pseudo-prose. Words are random syllable strings, so the text
 * has no long repeated runs and two different seeds share no long prefix: simulated cache hits
 * come only from real prefix reuse, never from accidental repetition.
 */
export function fillerText(seed: number, length: number): string {
  const random = createRandom(seed)
  const parts: string[] = []
  let size = 0
  while (size < length) {
    const syllables = 1 + Math.floor(random() * 4)
    let word = ''
    for (let index = 0; index < syllables; index++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)]
    const separator = random() < 0.08 ? '.\n' : ' '
    parts.push(word + separator)
    size += word.length + separator.length
  }
  return parts.join('').slice(0, length)
}
