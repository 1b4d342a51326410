import { RunError } from '../shared/run-error.ts'

/** The error for a logged field that is not what the engine logs: `<where>: <field> must be <expected>, got …`. */
export function fieldError(where: string, field: string, expected: string, value: unknown): RunError {
  return new RunError(`${where}: ${field} must be ${expected}, got ${JSON.stringify(value) ?? 'nothing'}`)
}
