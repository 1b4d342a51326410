/**
 * Columns two spaces apart, each as wide as its widest cell in `rows` (the header first): their `widths`, and
 * `line`, which pads each cell of a row to its column's width, on the left in the columns `alignRight` picks.
 */
export function textColumns(rows: ReadonlyArray<readonly string[]>, alignRight: (column: number) => boolean) {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => (row[column] as string).length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        alignRight(column) ? cell.padStart(widths[column] as number) : cell.padEnd(widths[column] as number),
      )
      .join('  ')
  return { widths, line }
}
