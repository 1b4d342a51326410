import type { PriceProfile } from '@warmfold/prefix-cache-testkit'
import { PRICE_PROFILES, PRICE_SYNTAX } from '@warmfold/prefix-cache-testkit'
import { SESSION_ID_PATTERN } from '@warmfold/session'
import { readPriceProfile } from '../shared/read-profile.ts'
import type { StoreSpec } from '../shared/session-store-spec.ts'
import { describeStore, parseStoreSpec, STORE_SYNTAX } from '../shared/session-store-spec.ts'
import type { CommandFlags } from '../shared/command-flags.ts'
import { formatUsage, parseFlags } from '../shared/command-flags.ts'
import { UsageError } from '../shared/usage-error.ts'

/** The parsed `warmfold report` command line. */
export interface ReportArgs {
  /** The session log (`SESSION.jsonl`), or with `store` the session's id. */
  session: string
  /** The session store to read `session` from (`--store`); absent: `session` is a JSONL file. */
  store?: StoreSpec
  /** Where to write the HTML page; without it a terminal summary is printed. */
  out?: string
  /** What tokens cost (`--price`, default `deepseek`). */
  price: PriceProfile
  /** Print the report as one JSON document instead of the summary (`--json`). */
  json: boolean
  help: boolean
}

/** What `warmfold report`'s flags set. */
type ReportFlags = { [Key in 'out' | 'store']: ReportArgs[Key] | undefined } & Omit<
  ReportArgs,
  'session' | 'out' | 'store'
>

/** `warmfold report`'s flags: the table that parses them and prints `--help`. */
const REPORT_FLAGS: CommandFlags<ReportFlags> = {
  command: 'report',
  synopsis: `Usage: warmfold report SESSION.jsonl [--out report.html | --json] [--price P]
       warmfold report --store S SESSION_ID [--out report.html | --json] [--price P]

Reads a session log written by the session file store, or a session kept in a session store,
and shows every request's cached and prefilled (written or uncached) prompt tokens, the folds and prunes
between them, each cache break with its cause, the totals and their cost. The numbers come from
the cache ledger's cache/observation events, or, in a log without them, from the provider usage
on each reply (the output says which).`,
  footer: `Exit codes: 0 ok, 1 the log cannot be read (a corrupt or torn line, named by file and line; a
store that fails) or FILE cannot be written, 2 bad flags or no such log, store or session.`,
  column: 13,
  positionals: true,
  flags: {
    store: {
      value: 'S',
      parse: (text, values) => {
        if (values.store) throw new UsageError('--store is given twice')
        return parseStoreSpec('--store', text)
      },
      help: [
        'read SESSION_ID from a session store instead of a file:',
        `${STORE_SYNTAX}. file:DIR reads DIR/SESSION_ID.jsonl;`,
        'sqlite and postgres read the committed events without taking the session from a',
        'host that holds it, create nothing, and need @warmfold/session-store-sqlite or',
        '-postgres installed',
      ],
    },
    out: {
      value: 'FILE',
      help: [
        'write one self-contained HTML page (bar chart, breaks, totals; works offline from',
        'file://) instead of printing the summary; checked before the log is read, its folder',
        'must exist',
      ],
    },
    price: {
      value: 'P',
      default: PRICE_PROFILES.deepseek,
      parse: readPriceProfile,
      help: [`${PRICE_SYNTAX} (default deepseek): what a cached, written, uncached`, 'and output token costs'],
    },
    json: {
      default: false,
      help: [
        'print the whole report (requests, folds and prunes, breaks, fold timing, fold',
        'audit, totals) as one JSON document instead of the summary',
      ],
    },
    help: { short: 'h', default: false, help: ['show this help'] },
  },
}

/** `warmfold report --help`, printed from the flag table. */
export const REPORT_USAGE = formatUsage(REPORT_FLAGS)

/**
 * Parses `warmfold report` arguments.
 * @throws UsageError naming the flag or argument and what is wrong with it.
 */
export function parseReportArgs(argv: readonly string[]): ReportArgs {
  const { values, positionals } = parseFlags(REPORT_FLAGS, argv)
  const { out, store, price, json, help } = values
  if (json && out !== undefined)
    throw new UsageError('--json and --out are exclusive: the JSON document goes to stdout, the HTML page to --out')
  const rest = { price, json, help, ...(out === undefined ? {} : { out }), ...(store === undefined ? {} : { store }) }
  const quoted = positionals.map((item) => JSON.stringify(item)).join(' ')
  if (help) return { session: positionals[0] ?? '', ...rest }
  if (store) {
    if (positionals.length !== 1) {
      const got = positionals.length ? `, got ${quoted}` : ''
      const usage = `warmfold report --store ${describeStore(store)} SESSION_ID`
      throw new UsageError(`warmfold report --store reads one session: ${usage}${got}`)
    }
    const id = positionals[0] as string
    // The store's own rule, so a `file:DIR` id can never leave DIR.
    if (!SESSION_ID_PATTERN.test(id))
      throw new UsageError(
        `session id ${JSON.stringify(id)} is not one a store gives: 1-128 letters, digits, '.', '_' or '-', ` +
          'starting with a letter or digit',
      )
    return { session: id, ...rest }
  }
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'warmfold report needs the session log to read: warmfold report SESSION.jsonl'
        : `warmfold report reads one session log, got ${positionals.length}: ${quoted}`,
    )
  }
  return { session: positionals[0] as string, ...rest }
}
