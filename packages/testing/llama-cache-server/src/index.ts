export type { LlamaCacheRecord, LlamaCacheServer, LlamaCacheServerOptions } from './llama-cache-server.ts'
export { startLlamaCacheServer } from './llama-cache-server.ts'
export type { TinyGgufInfo, TinyGgufOptions } from './write-tiny-gguf.ts'
export { buildTinyGguf, writeTinyGguf } from './write-tiny-gguf.ts'
