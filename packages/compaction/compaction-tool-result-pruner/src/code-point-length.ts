/**
 * Number of Unicode code points in `text`, the unit of every pruner budget.
 *
 * A surrogate pair (an astral character such as an emoji) counts 1; a lone surrogate counts 1,
 * exactly as `Array.from(text).length` and the string iterator count, but without allocating
 * an array: tool results can be megabytes long.
 */
export function codePointLength(text: string): number {
  let count = 0
  for (let index = 0; index < text.length; index += 1) {
    if (isPairAt(text, index)) index += 1
    count += 1
  }
  return count
}

/**
 * The UTF-16 index in `text` where code point number `codePoints` starts (`text.length` when
 * `codePoints` reaches past the end). Slicing at such an index can never split a surrogate
 * pair, which is why the pruner cuts only at offsets this function returns.
 */
export function codePointOffset(text: string, codePoints: number): number {
  let index = 0
  for (let counted = 0; counted < codePoints && index < text.length; counted += 1) {
    index += isPairAt(text, index) ? 2 : 1
  }
  return index
}

/** Whether a high surrogate at `index` is followed by a low surrogate (one astral code point). */
function isPairAt(text: string, index: number): boolean {
  const unit = text.charCodeAt(index)
  if (unit < 0xd800 || unit > 0xdbff || index + 1 >= text.length) return false
  const next = text.charCodeAt(index + 1)
  return next >= 0xdc00 && next <= 0xdfff
}
