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

type Scalar = 'uint32' | 'int32' | 'float32' | 'bool' | 'string'

/** GGUF value type ids (ggml `gguf_type`). */
const VALUE_TYPE = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const
/** ggml tensor type id for f32. */
const TENSOR_TYPE_F32 = 0
const GGUF_VERSION = 3

/** Little-endian bytes, collected in pieces and joined at the end. */
class ByteWriter {
  private readonly pieces: Uint8Array[] = []
  length = 0

  bytes(bytes: Uint8Array): void {
    this.pieces.push(bytes)
    this.length += bytes.length
  }

  /** `size` bytes written by `write` into a view of them. */
  private number(size: number, write: (view: DataView) => void): void {
    const bytes = new Uint8Array(size)
    write(new DataView(bytes.buffer))
    this.bytes(bytes)
  }

  uint32(value: number): void {
    this.number(4, (view) => view.setUint32(0, value, true))
  }

  int32(value: number): void {
    this.number(4, (view) => view.setInt32(0, value, true))
  }

  uint64(value: number): void {
    this.number(8, (view) => view.setBigUint64(0, BigInt(value), true))
  }

  float32(value: number): void {
    this.number(4, (view) => view.setFloat32(0, value, true))
  }

  /** A GGUF string: u64 byte length, then UTF-8 bytes (no terminator). */
  string(value: string): void {
    const encoded = new TextEncoder().encode(value)
    this.uint64(encoded.length)
    this.bytes(encoded)
  }

  /** One value of a scalar type, without its type id. */
  scalar(type: Scalar, value: number | boolean | string): void {
    if (type === 'bool') this.bytes(Uint8Array.of(value ? 1 : 0))
    else if (type === 'string') this.string(value as string)
    else this[type](value as number)
  }

  padTo(alignment: number): void {
    this.bytes(new Uint8Array((alignment - (this.length % alignment)) % alignment))
  }

  toBytes(): Uint8Array {
    // A plain Uint8Array, not the Buffer `concat` returns.
    return new Uint8Array(Buffer.concat(this.pieces, this.length))
  }
}

/** A value's type id and value; an array's element type id and count come before its elements. */
function writeValue(writer: ByteWriter, value: GgufValue): void {
  if (!value.type.endsWith('-array')) {
    writer.uint32(VALUE_TYPE[value.type as Scalar])
    writer.scalar(value.type as Scalar, value.value as number | boolean | string)
    return
  }
  const element = value.type.slice(0, -'-array'.length) as Scalar
  const items = value.value as readonly (number | string)[]
  writer.uint32(VALUE_TYPE.array)
  writer.uint32(VALUE_TYPE[element])
  writer.uint64(items.length)
  for (const item of items) writer.scalar(element, item)
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
