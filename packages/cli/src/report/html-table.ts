/** A table's opening tag and header row; `cells` are already HTML. */
export function tableHead(className: string, cells: readonly string[]): string {
  const head = cells.map((cell) => `<th>${cell}</th>`).join('')
  return `<table class="${className}"><thead><tr>${head}</tr></thead><tbody>`
}

/** One table row; `cells` are already HTML. */
export function tableRow(cells: ReadonlyArray<string | number>): string {
  return `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`
}
