import type { SecretRedactor } from '@warmfold/llm/adapter'
import { secretRedactor } from '@warmfold/llm/adapter'

/** A {@link SecretRedactor} for several secrets at once. */
export type Redactor = SecretRedactor

/**
 * Chains one `secretRedactor` per secret. The adapter does not hold the provider's API key (the
 * host's provider instance does), so the host lists it in `redact`; without it, nothing is scrubbed.
 */
export function redactorFor(secrets: readonly string[]): Redactor {
  const redactors = secrets.map((secret) => secretRedactor(secret))
  return {
    text: (text) => redactors.reduce((value, redactor) => redactor.text(value), text),
    value: <T>(value: T): T => redactors.reduce((current, redactor) => redactor.value(current), value),
    error: (error) => redactors.reduce((current, redactor) => redactor.error(current), error),
  }
}
