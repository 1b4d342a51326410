/**
 * `line` with every control character (C0, DEL and C1: newlines, escape sequences, the 8-bit CSI
 * U+009B) written as `\uXXXX`, so text taken from a log cannot move the cursor, recolour or retitle
 * the terminal, or forge a line of the output. Apply it to each line the command builds, never to
 * the newlines that join them.
 */
export function printable(line: string): string {
  return line.replace(
    // oxlint-disable-next-line no-control-regex -- matching control characters is the point
    /[\u0000-\u001f\u007f-\u009f]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

/**
 * A JSON document with DEL and the C1 control characters written as `\u` escapes too (JSON.stringify
 * escapes only C0 ones): the same value, safe to print on a terminal. They can only occur inside
 * strings, where the escape is valid JSON.
 */
export function printableJson(json: string): string {
  return json.replace(/[\u007f-\u009f]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
