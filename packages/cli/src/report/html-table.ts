/** A table's opening tag and header row; `cells` are already HTML. */
export function tableHead(className: string, cells: readonly string[]): string {
  const head = cells.map((cell) => `<th>${cell}</th>`).join('')
  return `<table class="${className}"><thead><tr>${head}</tr></thead><tbody>`
}

/**
 * A section of things logged between requests (guard findings, folds, forks, …): its heading with their count, `intro`,
 * and a table with a row per item (its log line and the requests before it, then `cells`, already HTML); nothing
 * without items.
 */
export function loggedSection<Item extends { readonly line: number; readonly afterRequest: number }>(
  id: string,
  title: string,
  intro: string,
  columns: readonly string[],
  items: readonly Item[],
  cells: (item: Item) => ReadonlyArray<string | number>,
): string[] {
  if (!items.length) return []
  return [
    `<section id="${id}"><h2>${title} (${items.length})</h2><p>${intro}</p>` +
      tableHead('guards', ['line', 'after request', ...columns]),
    ...items.map(
      (item) =>
        `<tr>${[item.line, `#${item.afterRequest}`, ...cells(item)].map((cell) => `<td>${cell}</td>`).join('')}</tr>`,
    ),
    '</tbody></table></section>',
  ]
}
