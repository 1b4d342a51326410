import { isRecord } from '@warmfold/cache-ledger/prefix'
import { RunError } from '../shared/run-error.ts'

/** The error for a logged field that is not what the engine logs: `<where>: <field> must be <expected>, got …`. */
export function fieldError(where: string, field: string, expected: string, value: unknown): RunError {
  return new RunError(`${where}: ${field} must be ${expected}, got ${JSON.stringify(value) ?? 'nothing'}`)
}

/** `value` when it is a JSON object (not null, not an array), else the {@link fieldError} of `field`. */
export function objectField(where: string, field: string, value: unknown): Record<string, unknown> {
  if (!isRecord(value)) throw fieldError(where, field, 'an object', value)
  return value
}

/** A number for each of `Keys`, as a tuple. */
export type NumbersOf<Keys extends readonly unknown[]> = { -readonly [Index in keyof Keys]: number }

/** `value` when it is a finite number ≥ 0, else the {@link fieldError} of `field`. */
export function numberField(where: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw fieldError(where, field, 'a number ≥ 0', value)
  return value
}
