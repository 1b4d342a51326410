import type { MaskedLine } from './masked-line.ts'

/** `ls -l` rows: permissions, links, owner, group, size, date, then the name (`a -> b` for a symbolic link). */
const LS_LONG = new RegExp(
  String.raw`^[-dlcbps][rwxsStT-]{9}[@+.]?\s+\d+\s+\S+\s+\S+\s+[\d.,]+[KMGTkB]?\s+` +
    String.raw`(?:[A-Z][a-z]{2}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|` +
    String.raw`\d{4})|\d{4}-\d{2}-\d{2}(?:\s+\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:\s+[+-]\d{4})?)\s+(.+)$`,
  'd',
)
/** `git status` entries: `\tmodified:   src/a.ts`, `\trenamed:    a -> b`. */
const GIT_STATUS_LONG = new RegExp(
  String.raw`^\s+(?:modified|new file|deleted|renamed|copied|typechange|both modified|both added|` +
    String.raw`both deleted|added by us|added by them|deleted by us|deleted by them):\s+(\S.*)$`,
  'd',
)
/** `git status --short` entries: two status letters, a space, the path (`R  a -> b`). */
const GIT_STATUS_SHORT = /^(?![ ]{2})[ MADRCUT?!]{2} (\S+(?: -> \S+)?)$/d
/**
 * `tree` and similar listings: `├── name`, `└─ name/` (one word: `└── zod 3.22.4` is a dependency
 * tree, read as text).
 */
const TREE_ENTRY = /^[\s│├└─|`]*[├└]─+\s+(\S+)$/d
/**
 * `du -h` rows: a size with its unit, a tab, the path (`412M<TAB>node_modules`); a bare number
 * before a tab is `cat -n`'s line number.
 */
const DU_ROW = /^\s*[\d.,]+[KMGTP]i?B?\t(\S.*)$/d
/** Coverage tables: the first cell of a row whose other cells are numbers (`  app.ts  |  92.85 |  83.33 |`). */
const COVERAGE_ROW = /^\s*([\w.@/-]+)\s*\|(?:\s*[\d.]+\s*\|){2,}/d
/**
 * Diff headers: `diff --git a/x b/y`, `--- a/x`, `+++ b/x`, `rename from x`; apply_patch headers
 * `*** Update File: x`.
 */
const DIFF_GIT = /^diff --git a\/(\S+) b\/(\S+)$/d
const DIFF_FILE = /^(?:---|\+\+\+) ([ab]\/\S+)/d
const DIFF_RENAME = /^(?:rename|copy) (?:from|to) (\S.*)$/d
const PATCH_FILE = /^\*\*\* (?:Add|Update|Delete) File: (\S.*)$|^\*\*\* Move to: (\S.*)$/d

/** The paths of a line whose shape says where they are: a listing's entry, a diff or patch header. */
export function shapedLinePaths(scan: MaskedLine): void {
  const text = scan.text
  const shaped =
    LS_LONG.exec(text) ??
    GIT_STATUS_LONG.exec(text) ??
    GIT_STATUS_SHORT.exec(text) ??
    TREE_ENTRY.exec(text) ??
    COVERAGE_ROW.exec(text) ??
    DU_ROW.exec(text)
  if (shaped?.indices?.[1]) {
    const entry = shaped[1]!.trim()
    for (const name of entry.split(' -> ')) {
      const cleaned = name.trim().replace(/^["']|["']$/g, '')
      if (/[A-Za-z0-9]/.test(cleaned) && cleaned !== '.' && cleaned !== '..') scan.path(cleaned)
    }
    scan.take(shaped.indices[1][0], shaped.indices[1][1])
  }
  const fileHeader = DIFF_FILE.exec(text)
  if (fileHeader?.indices?.[1]) {
    scan.path(fileHeader[1]!.slice(2))
    scan.take(fileHeader.indices[1][0], fileHeader.indices[1][1])
  }
  const header = DIFF_GIT.exec(text) ?? DIFF_RENAME.exec(text) ?? PATCH_FILE.exec(text)
  if (header?.indices) {
    for (let group = 1; group < header.length; group++) {
      const value = header[group]
      if (value === undefined) continue
      scan.path(value.trim())
      scan.take(header.indices[group]![0], header.indices[group]![1])
    }
  }
  scan.flush()
}
