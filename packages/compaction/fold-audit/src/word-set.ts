/** The words of `list`, separated by white space, as a set. */
export function wordSet(list: string): ReadonlySet<string> {
  return new Set(list.trim().split(/\s+/))
}
