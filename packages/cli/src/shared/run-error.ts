/**
 * A run that failed for a reason its message explains completely (an endpoint's answer, an
 * output file that cannot be written): printed without a stack, exit code 1.
 */
export class RunError extends Error {
  override readonly name = 'RunError'
}
