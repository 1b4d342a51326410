import { readFileSync } from 'node:fs'
import { UsageError } from './usage-error.ts'

/**
 * Reads the JSON file a profile flag (`--price`, `--latency`) names when its value is not a
 * built-in profile. `syntax` lists the accepted values for the message.
 * @throws UsageError naming the flag and the file: it does not exist, cannot be read, or is not JSON.
 */
export function readProfileFile(flag: string, file: string, syntax: string): { json: unknown; text: string } {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT'
        ? 'is neither a built-in profile nor an existing file'
        : `could not be read (${code ?? (error as Error).message})`
    throw new UsageError(`${flag} ${JSON.stringify(file)} ${why}; use ${syntax}`)
  }
  try {
    return { json: JSON.parse(text), text }
  } catch (error) {
    throw new UsageError(`${flag} file ${JSON.stringify(file)} is not valid JSON: ${(error as Error).message}`)
  }
}

/**
 * The number `key` has in a JSON file's `text`, as the file writes it: JSON.parse keeps only its
 * value, and reads `1e999` as Infinity. `number` (the parsed value) when the key is not found.
 */
export function writtenNumber(text: string, key: string, number: number): string {
  return new RegExp(`"${key}"\\s*:\\s*(-?[0-9][0-9.eE+-]*)`).exec(text)?.[1] ?? String(number)
}
