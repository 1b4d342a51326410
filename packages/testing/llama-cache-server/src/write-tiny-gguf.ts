import { writeFile } from 'node:fs/promises'
import { TINY_CHAT_TEMPLATE } from './chat-template.ts'
import type { GgufTensor, GgufValue } from './gguf-writer.ts'
import { encodeGguf } from './gguf-writer.ts'
import { SeededRandom } from './seeded-random.ts'
import { buildTinyVocabulary } from './tiny-vocab.ts'

/** Options of {@link buildTinyGguf} and {@link writeTinyGguf}. */
export interface TinyGgufOptions {
  /** `llama.context_length` in tokens. Default 32768. */
  contextLength?: number
  /** PRNG seed of the random weights. Default 1. The same seed gives the same bytes. */
  seed?: number
  /**
   * What every completion is: `'ok'` (the piece `ok`, then `</s>`) or `'empty'` (`</s>` at once).
   * Default `'ok'`.
   */
  answer?: 'ok' | 'empty'
  /** `tokenizer.chat_template`. Default {@link TINY_CHAT_TEMPLATE}, which the server also implements. */
  chatTemplate?: string
}

/** What {@link writeTinyGguf} wrote. */
export interface TinyGgufInfo {
  readonly path: string
  /** File size in bytes (about 0.6 MB). */
  readonly byteLength: number
  readonly vocabularySize: number
  readonly contextLength: number
}

const EMBEDDING = 64
const LAYERS = 2
const HEADS = 4
const FEED_FORWARD = 128
const WEIGHT_SCALE = 0.02
/**
 * Residual dimension 0 carries "answer now", dimension 1 "stop now". Every token embedding holds
 * one of them at this value and no layer writes to either, so after the final RMS norm it is the
 * largest component by far and decides the greedy argmax on its own.
 */
const STEERING_VALUE = 8
const ANSWER_DIMENSION = 0
const STOP_DIMENSION = 1

const ones = (length: number): Float32Array => new Float32Array(length).fill(1)
const uint32 = (value: number): GgufValue => ({ type: 'uint32', value })

/**
 * Builds the tiny model in memory: llama architecture, 2 layers, embedding 64, 4 heads (head
 * dimension 16), FFN 128, f32 weights from a seeded PRNG, the byte-fallback vocabulary of
 * {@link buildTinyVocabulary} and {@link TINY_CHAT_TEMPLATE}.
 *
 * Random weights would emit arbitrary byte tokens (invalid UTF-8), so the weights are steered:
 * greedy decoding after any token except `ok` emits `ok`, and after `ok` emits `</s>` (with
 * `answer: 'empty'`, every token is followed by `</s>`). Every completion is therefore the valid
 * string `"ok"` (or `""`), whatever the prompt, while the prompt still runs through real attention
 * and fills a real KV cache.
 *
 * @throws RangeError when `contextLength` is not a positive integer.
 */
export function buildTinyGguf(options: TinyGgufOptions = {}): Uint8Array {
  const contextLength = options.contextLength ?? 32768
  if (!Number.isInteger(contextLength) || contextLength < 1) {
    throw new RangeError(`buildTinyGguf: contextLength must be a positive integer, got ${contextLength}`)
  }
  const answer = options.answer ?? 'ok'
  const random = new SeededRandom(options.seed ?? 1)
  const vocabulary = buildTinyVocabulary()
  const vocabularySize = vocabulary.tokens.length
  const randomMatrix = (rowLength: number, rows: number): Float32Array => {
    const data = new Float32Array(rowLength * rows)
    for (let index = 0; index < data.length; index++) data[index] = random.normal(WEIGHT_SCALE)
    return data
  }

  const embeddings = randomMatrix(EMBEDDING, vocabularySize)
  for (let token = 0; token < vocabularySize; token++) {
    const stopsNext = answer === 'empty' || token === vocabulary.answerId
    embeddings[token * EMBEDDING + ANSWER_DIMENSION] = stopsNext ? 0 : STEERING_VALUE
    embeddings[token * EMBEDDING + STOP_DIMENSION] = stopsNext ? STEERING_VALUE : 0
  }
  const output = randomMatrix(EMBEDDING, vocabularySize)
  for (let token = 0; token < vocabularySize; token++) {
    output[token * EMBEDDING + ANSWER_DIMENSION] = 0
    output[token * EMBEDDING + STOP_DIMENSION] = 0
  }
  output[vocabulary.answerId * EMBEDDING + ANSWER_DIMENSION] = 1
  output[vocabulary.eosId * EMBEDDING + STOP_DIMENSION] = 1

  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', dimensions: [EMBEDDING, vocabularySize], data: embeddings },
    { name: 'output_norm.weight', dimensions: [EMBEDDING], data: ones(EMBEDDING) },
    { name: 'output.weight', dimensions: [EMBEDDING, vocabularySize], data: output },
  ]
  for (let layer = 0; layer < LAYERS; layer++) {
    const norm = (name: string): GgufTensor => ({
      name: `blk.${layer}.${name}.weight`,
      dimensions: [EMBEDDING],
      data: ones(EMBEDDING),
    })
    /** A random `[rowLength, rows]` weight; `steering` zeroes its rows that write into the steering dimensions. */
    const weight = (name: string, rowLength: number, rows: number, steering = false): GgufTensor => {
      const data = randomMatrix(rowLength, rows)
      for (const dimension of steering ? [ANSWER_DIMENSION, STOP_DIMENSION] : [])
        data.fill(0, dimension * rowLength, (dimension + 1) * rowLength)
      return { name: `blk.${layer}.${name}.weight`, dimensions: [rowLength, rows], data }
    }
    // In this order: the weights draw from the seeded PRNG one after the other.
    tensors.push(
      norm('attn_norm'),
      weight('attn_q', EMBEDDING, EMBEDDING),
      weight('attn_k', EMBEDDING, EMBEDDING),
      weight('attn_v', EMBEDDING, EMBEDDING),
      weight('attn_output', EMBEDDING, EMBEDDING, true),
      norm('ffn_norm'),
      weight('ffn_gate', EMBEDDING, FEED_FORWARD),
      weight('ffn_up', EMBEDDING, FEED_FORWARD),
      weight('ffn_down', FEED_FORWARD, EMBEDDING, true),
    )
  }

  const metadata: Array<readonly [string, GgufValue]> = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'warmfold tiny llama' }],
    ['general.file_type', uint32(0)],
    ['general.alignment', uint32(32)],
    ['llama.vocab_size', uint32(vocabularySize)],
    ['llama.context_length', uint32(contextLength)],
    ['llama.embedding_length', uint32(EMBEDDING)],
    ['llama.block_count', uint32(LAYERS)],
    ['llama.feed_forward_length', uint32(FEED_FORWARD)],
    ['llama.attention.head_count', uint32(HEADS)],
    ['llama.attention.head_count_kv', uint32(HEADS)],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'float32', value: 1e-5 }],
    ['llama.rope.dimension_count', uint32(EMBEDDING / HEADS)],
    ['llama.rope.freq_base', { type: 'float32', value: 10000 }],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'string-array', value: vocabulary.tokens }],
    ['tokenizer.ggml.scores', { type: 'float32-array', value: vocabulary.scores }],
    ['tokenizer.ggml.token_type', { type: 'int32-array', value: vocabulary.types }],
    ['tokenizer.ggml.bos_token_id', uint32(vocabulary.bosId)],
    ['tokenizer.ggml.eos_token_id', uint32(vocabulary.eosId)],
    ['tokenizer.ggml.unknown_token_id', uint32(vocabulary.unknownId)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
    // Without this, SentencePiece prefixes a space to every text run after a control token.
    ['tokenizer.ggml.add_space_prefix', { type: 'bool', value: false }],
    ['tokenizer.chat_template', { type: 'string', value: options.chatTemplate ?? TINY_CHAT_TEMPLATE }],
  ]
  return encodeGguf(metadata, tensors)
}

/**
 * Writes {@link buildTinyGguf}'s model to `path` (about 0.6 MB, about 0.1 s). Generate it where
 * it is needed (e.g. under `os.tmpdir()`); it is deterministic, so there is no reason to commit it.
 */
export async function writeTinyGguf(path: string, options: TinyGgufOptions = {}): Promise<TinyGgufInfo> {
  const bytes = buildTinyGguf(options)
  await writeFile(path, bytes)
  return {
    path,
    byteLength: bytes.length,
    vocabularySize: buildTinyVocabulary().tokens.length,
    contextLength: options.contextLength ?? 32768,
  }
}
