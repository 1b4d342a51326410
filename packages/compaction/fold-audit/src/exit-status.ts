/**
 * The exit code a tool result reports in its text, as agent hosts and tools write it
 * (`Exit code: 1`, `exited with code 2`, `exit status 2`, `Process exited with code 1`,
 * `returncode=1`), the last one when there are several; `undefined` when it says none.
 */
export function exitCodeOf(text: string): number | undefined {
  let code: number | undefined
  for (const match of text.matchAll(
    /\b(?:exit(?:ed)?(?: with)?(?: code| status)|exit_code|returncode|return code)\s*(?:[:=]\s*)?(-?\d{1,3})\b/gi,
  ))
    code = Number(match[1])
  return code
}
