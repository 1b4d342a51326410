/** SentencePiece token types as GGUF stores them (`tokenizer.ggml.token_type`). */
export const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, byte: 6 } as const

/**
 * The control tokens the chat template is built from. The server tokenizes prompts with special
 * tokens enabled (as llama-server does), so each marker is exactly one token and the boundary
 * between two requests never depends on how neighbouring text merges.
 */
export const TEMPLATE_TOKENS: readonly string[] =
  '<|system|> <|user|> <|assistant|> <|tool|> <|tools|> <|end|> <think> </think> <tool_call> </tool_call>'.split(' ')

/** The piece the steered model answers with before `</s>`. */
export const ANSWER_PIECE = 'ok'

/**
 * Whole words that get their own `▁word` piece. Every prefix (`▁t`, `▁th`, `▁the`) is a piece too,
 * because SentencePiece only merges a pair whose concatenation is in the vocabulary.
 */
const WORDS =
  'the and to of in is that for with this you are file read tool test line function return const error value'.split(' ')

/** The vocabulary of the tiny model: parallel arrays plus the ids the steering needs. */
export interface TinyVocabulary {
  readonly tokens: readonly string[]
  readonly scores: readonly number[]
  readonly types: readonly number[]
  readonly unknownId: number
  readonly bosId: number
  readonly eosId: number
  /** Id of {@link ANSWER_PIECE}. */
  readonly answerId: number
}

/**
 * Builds the SentencePiece ("llama") byte-fallback vocabulary: `<unk>`, `<s>`, `</s>`, the 256
 * `<0xNN>` byte tokens, the template's control tokens, `▁`, printable ASCII, `▁word` pieces with
 * their prefixes, and `ok`. Text outside this set (newlines, non-ASCII) falls back to bytes, so
 * every string tokenizes and detokenizes losslessly.
 */
export function buildTinyVocabulary(): TinyVocabulary {
  const tokens: string[] = []
  const scores: number[] = []
  const types: number[] = []
  const add = (piece: string, type: number, score = 0): number => {
    tokens.push(piece)
    scores.push(score)
    types.push(type)
    return tokens.length - 1
  }
  const unknownId = add('<unk>', TOKEN_TYPE.unknown)
  const bosId = add('<s>', TOKEN_TYPE.control)
  const eosId = add('</s>', TOKEN_TYPE.control)
  for (let byte = 0; byte < 256; byte++) {
    add(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, TOKEN_TYPE.byte)
  }
  for (const marker of TEMPLATE_TOKENS) add(marker, TOKEN_TYPE.control)
  add('▁', TOKEN_TYPE.normal, -1)
  // Printable ASCII without the space, which SentencePiece always writes as `▁`.
  for (let code = 0x21; code <= 0x7e; code++) add(String.fromCharCode(code), TOKEN_TYPE.normal, -1)
  const seen = new Set(tokens)
  for (const word of WORDS) {
    for (let end = 1; end <= word.length; end++) {
      const piece = `▁${word.slice(0, end)}`
      if (seen.has(piece)) continue
      seen.add(piece)
      // Longer pieces score higher, so the tokenizer prefers completing a word.
      add(piece, TOKEN_TYPE.normal, piece.length)
    }
  }
  const answerId = add(ANSWER_PIECE, TOKEN_TYPE.normal, ANSWER_PIECE.length)
  return { tokens, scores, types, unknownId, bosId, eosId, answerId }
}
