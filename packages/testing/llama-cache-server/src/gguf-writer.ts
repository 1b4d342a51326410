/** A metadata value, tagged with the GGUF value type it is written as. */
export type GgufValue =
  | { readonly type: 'uint32'; readonly value: number }
  | { readonly type: 'int32'; readonly value: number }
  | { readonly type: 'float32'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'string-array'; readonly value: readonly string[] }
  | { readonly type: 'float32-array'; readonly value: readonly number[] }
  | { readonly type: 'int32-array'; readonly value: readonly number[] }

/**
 * One f32 tensor. `dimensions` are in GGUF order: `dimensions[0]` is the length of a row (the
 * fastest-varying axis), so a PyTorch weight of shape `[out, in]` is written as `[in, out]` and
 * row `r` of `data` holds the weights that produce output `r`.
 */
export interface GgufTensor {
  readonly name: string
  readonly dimensions: readonly number[]
  readonly data: Float32Array
}

/** GGUF value type ids (ggml `gguf_type`). */
const VALUE_TYPE = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const
/** ggml tensor type id for f32. */
const TENSOR_TYPE_F32 = 0
const GGUF_VERSION = 3

/** A growable little-endian byte buffer. */
class ByteWriter {
  private buffer = new Uint8Array(1 << 16)
  private view = new DataView(this.buffer.buffer)
  length = 0

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return
    let capacity = this.buffer.length
    while (capacity < this.length + bytes) capacity *= 2
    const grown = new Uint8Array(capacity)
    grown.set(this.buffer.subarray(0, this.length))
    this.buffer = grown
    this.view = new DataView(grown.buffer)
  }

  uint32(value: number): void {
    this.reserve(4)
    this.view.setUint32(this.length, value, true)
    this.length += 4
  }

  int32(value: number): void {
    this.reserve(4)
    this.view.setInt32(this.length, value, true)
    this.length += 4
  }

  uint64(value: number): void {
    this.reserve(8)
    this.view.setBigUint64(this.length, BigInt(value), true)
    this.length += 8
  }

  float32(value: number): void {
    this.reserve(4)
    this.view.setFloat32(this.length, value, true)
    this.length += 4
  }

  uint8(value: number): void {
    this.reserve(1)
    this.view.setUint8(this.length, value)
    this.length += 1
  }

  bytes(bytes: Uint8Array): void {
    this.reserve(bytes.length)
    this.buffer.set(bytes, this.length)
    this.length += bytes.length
  }

  /** A GGUF string: u64 byte length, then UTF-8 bytes (no terminator). */
  string(value: string): void {
    const encoded = new TextEncoder().encode(value)
    this.uint64(encoded.length)
    this.bytes(encoded)
  }

  padTo(alignment: number): void {
    while (this.length % alignment !== 0) this.uint8(0)
  }

  toBytes(): Uint8Array {
    return this.buffer.slice(0, this.length)
  }
}

function writeValue(writer: ByteWriter, value: GgufValue): void {
  switch (value.type) {
    case 'uint32':
      writer.uint32(VALUE_TYPE.uint32)
      writer.uint32(value.value)
      return
    case 'int32':
      writer.uint32(VALUE_TYPE.int32)
      writer.int32(value.value)
      return
    case 'float32':
      writer.uint32(VALUE_TYPE.float32)
      writer.float32(value.value)
      return
    case 'bool':
      writer.uint32(VALUE_TYPE.bool)
      writer.uint8(value.value ? 1 : 0)
      return
    case 'string':
      writer.uint32(VALUE_TYPE.string)
      writer.string(value.value)
      return
    case 'string-array':
      writer.uint32(VALUE_TYPE.array)
      writer.uint32(VALUE_TYPE.string)
      writer.uint64(value.value.length)
      for (const item of value.value) writer.string(item)
      return
    case 'float32-array':
      writer.uint32(VALUE_TYPE.array)
      writer.uint32(VALUE_TYPE.float32)
      writer.uint64(value.value.length)
      for (const item of value.value) writer.float32(item)
      return
    case 'int32-array':
      writer.uint32(VALUE_TYPE.array)
      writer.uint32(VALUE_TYPE.int32)
      writer.uint64(value.value.length)
      for (const item of value.value) writer.int32(item)
      return
  }
}

/**
 * Encodes a GGUF v3 file: header, metadata in the given order, tensor infos, then the f32 tensor
 * data, each tensor aligned to `alignment` bytes (which is also written as `general.alignment`
 * when the caller includes it; llama.cpp assumes 32 otherwise).
 *
 * @throws TypeError when a tensor's data length does not match its dimensions.
 */
export function encodeGguf(
  metadata: ReadonlyArray<readonly [string, GgufValue]>,
  tensors: readonly GgufTensor[],
  alignment = 32,
): Uint8Array {
  const writer = new ByteWriter()
  writer.bytes(new TextEncoder().encode('GGUF'))
  writer.uint32(GGUF_VERSION)
  writer.uint64(tensors.length)
  writer.uint64(metadata.length)
  for (const [key, value] of metadata) {
    writer.string(key)
    writeValue(writer, value)
  }
  let offset = 0
  for (const tensor of tensors) {
    const elements = tensor.dimensions.reduce((product, dimension) => product * dimension, 1)
    if (elements !== tensor.data.length) {
      throw new TypeError(
        `encodeGguf: tensor ${tensor.name} has ${tensor.data.length} values for dimensions ` +
          `[${tensor.dimensions.join(', ')}]`,
      )
    }
    writer.string(tensor.name)
    writer.uint32(tensor.dimensions.length)
    for (const dimension of tensor.dimensions) writer.uint64(dimension)
    writer.uint32(TENSOR_TYPE_F32)
    writer.uint64(offset)
    offset += Math.ceil((tensor.data.length * 4) / alignment) * alignment
  }
  writer.padTo(alignment)
  for (const tensor of tensors) {
    const bytes = new Uint8Array(tensor.data.length * 4)
    const view = new DataView(bytes.buffer)
    tensor.data.forEach((value, index) => view.setFloat32(index * 4, value, true))
    writer.bytes(bytes)
    writer.padTo(alignment)
  }
  return writer.toBytes()
}
