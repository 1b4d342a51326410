import type { MaskedLine } from './masked-line.ts'
import { isWordCode } from './occurs-as-word.ts'
import { KNOWN_FILE_NAME_LENGTHS, pathFromToken } from './path-rules.ts'

/**
 * Per ASCII code unit: 1 for a path token's characters `[\w.~@+\-/:]`, 3 for those of them every
 * path but a well-known file name holds (`.`, `/`, `:`, `~`).
 */
const TOKEN_CODES = (() => {
  const codes = new Uint8Array(128)
  for (let code = 0; code < 128; code++)
    if (isWordCode(code) || '-@+'.includes(String.fromCharCode(code))) codes[code] = 1
  for (const sign of './:~') codes[sign.charCodeAt(0)] = 3
  return codes
})()

/**
 * The paths among a line's maximal runs of token characters, found without a regular
 * expression: most runs are words, and a word is a path only as a well-known file name
 * (`Makefile`, also with trailing dashes), so a word of another length is passed over without
 * making its string.
 */
export function tokenPaths(scan: MaskedLine): void {
  const text = scan.text
  const length = text.length
  for (let position = 0; position < length;) {
    const first = text.charCodeAt(position)
    if (first >= 128 || TOKEN_CODES[first] === 0) {
      position++
      continue
    }
    const start = position
    let signs = 0
    for (; position < length; position++) {
      const code = text.charCodeAt(position)
      const kind = code < 128 ? TOKEN_CODES[code]! : 0
      if (kind === 0) break
      signs |= kind
    }
    const end = position
    if (signs !== 3) {
      let wordEnd = end
      while (wordEnd > start && text.charCodeAt(wordEnd - 1) === 45) wordEnd--
      if (wordEnd - start < KNOWN_FILE_NAME_LENGTHS.shortest || wordEnd - start > KNOWN_FILE_NAME_LENGTHS.longest)
        continue
    }
    const found = pathFromToken(text.slice(start, end), text[start - 1] ?? '', text[end] ?? '')
    if (found !== undefined) {
      scan.path(found)
      scan.take(start, end)
    }
  }
  scan.flush()
}
