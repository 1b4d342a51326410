/**
 * The arguments object of a replayed tool call, for providers that take parsed arguments:
 * `JSON.parse` keeps the model's key order (integer-like keys excepted, which JavaScript always
 * orders first). Empty arguments become `{}`; text that is not a JSON object becomes
 * `{ _raw: text }`, so the call is still replayed deterministically (the agent loop already
 * answered it with an error result).
 */
export function parseToolArguments(argumentsText: string): Record<string, unknown> {
  if (argumentsText.trim() === '') return {}
  try {
    const value: unknown = JSON.parse(argumentsText)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // Not JSON: fall through to the raw wrapper.
  }
  return { _raw: argumentsText }
}
