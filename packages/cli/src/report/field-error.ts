import { RunError } from '../shared/run-error.ts'

/** The error for a logged field that is not what the engine logs: `<where>: <field> must be <expected>, got …`. */
export function fieldError(where: string, field: string, expected: string, value: unknown): RunError {
  return new RunError(`${where}: ${field} must be ${expected}, got ${JSON.stringify(value) ?? 'nothing'}`)
}

/** A number for each of `Keys`, as a tuple. */
export type NumbersOf<Keys extends readonly unknown[]> = { -readonly [Index in keyof Keys]: number }

/** `value` when it is a finite number ≥ 0, else the {@link fieldError} of `field`. */
export function numberField(where: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw fieldError(where, field, 'a number ≥ 0', value)
  return value
}
