import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readGgufFileInfo } from 'node-llama-cpp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTinyGguf, writeTinyGguf } from '../src/index.ts'
import { buildTinyVocabulary, TEMPLATE_TOKENS } from '../src/tiny-vocab.ts'
import { encodeGguf } from '../src/gguf-writer.ts'
import { TINY_CHAT_TEMPLATE } from '../src/chat-template.ts'

let directory = ''
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tiny-gguf-test-'))
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('buildTinyGguf', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const first = buildTinyGguf()
    expect(Buffer.from(buildTinyGguf()).equals(Buffer.from(first))).toBe(true)
    expect(Buffer.from(buildTinyGguf({ seed: 2 })).equals(Buffer.from(first))).toBe(false)
    expect(first.length).toBeGreaterThan(400_000)
    expect(first.length).toBeLessThan(800_000)
  })

  it('writes a llama GGUF that node-llama-cpp parses, with the documented shape, vocabulary and template', async () => {
    const path = join(directory, 'tiny.gguf')
    const info = await writeTinyGguf(path, { contextLength: 4096 })
    expect(info).toMatchObject({ path, contextLength: 4096, vocabularySize: buildTinyVocabulary().tokens.length })
    const file = await readGgufFileInfo(path)
    expect(file.version).toBe(3)
    expect(file.metadata.general.architecture).toBe('llama')
    const llama = (file.metadata as unknown as { llama: Record<string, unknown> }).llama
    expect(llama).toMatchObject({
      context_length: 4096,
      embedding_length: 64,
      block_count: 2,
      feed_forward_length: 128,
      attention: { head_count: 4, head_count_kv: 4 },
      rope: { dimension_count: 16 },
    })
    const tokenizer = file.metadata.tokenizer as unknown as {
      ggml: { model: string; tokens: string[]; token_type: number[] }
      chat_template: string
    }
    expect(tokenizer.ggml.model).toBe('llama')
    expect(tokenizer.ggml.tokens.slice(0, 4)).toEqual(['<unk>', '<s>', '</s>', '<0x00>'])
    expect(tokenizer.ggml.tokens).toContain('<0xFF>')
    expect(tokenizer.ggml.tokens).toContain('▁')
    expect(tokenizer.ggml.tokens).toContain('▁the')
    for (const marker of TEMPLATE_TOKENS)
      expect(tokenizer.ggml.token_type[tokenizer.ggml.tokens.indexOf(marker)]).toBe(3)
    expect(tokenizer.chat_template).toBe(TINY_CHAT_TEMPLATE)
    expect(file.tensorInfo?.map((tensor) => tensor.name)).toEqual(
      expect.arrayContaining([
        'token_embd.weight',
        'output.weight',
        'blk.1.ffn_down.weight',
        'blk.1.attn_output.weight',
      ]),
    )
    expect(file.tensorInfo).toHaveLength(3 + 2 * 9)
  })

  it('rejects a context length that is not a positive integer', () => {
    expect(() => buildTinyGguf({ contextLength: 0 })).toThrow(/contextLength must be a positive integer/)
  })
})

describe('encodeGguf', () => {
  it('refuses a tensor whose data does not match its dimensions', () => {
    expect(() => encodeGguf([], [{ name: 'bad', dimensions: [2, 3], data: new Float32Array(5) }])).toThrow(
      /tensor bad has 5 values/,
    )
  })

  it('aligns the tensor data section', () => {
    const bytes = encodeGguf(
      [['general.alignment', { type: 'uint32', value: 32 }]],
      [{ name: 'x', dimensions: [3], data: new Float32Array([1, 2, 3]) }],
    )
    // The file ends with the tensor padded to 32 bytes, and the data section starts aligned.
    expect(bytes.length % 32).toBe(0)
    const view = new DataView(bytes.buffer, bytes.byteOffset)
    expect(view.getFloat32(bytes.length - 32, true)).toBe(1)
  })
})
