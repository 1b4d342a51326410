import { parseArgs } from 'node:util'
import { UsageError } from './usage-error.ts'

/**
 * One flag of a command: whether it takes a value, its default, how one occurrence is validated,
 * and its help lines. A command's table of these parses its arguments and prints its `--help`,
 * so the two cannot drift apart.
 */
type Flag<Value, Values> = FlagFields<Value, Values> &
  // A field that may be undefined defaults to undefined; any other needs its default.
  (undefined extends Value ? { readonly default?: Value } : { readonly default: Value })

/** A flag's fields but its default. */
interface FlagFields<Value, Values> {
  /** The long name without its dashes; default: the field's name in kebab case (`keepSessions` → `keep-sessions`). */
  readonly name?: string
  /** A one-letter alias (`h` for `-h`). */
  readonly short?: string
  /** The value's name in the usage (`LIST`, `N`); absent for a switch, which takes no value and sets `true`. */
  readonly value?: string
  /**
   * Validates one occurrence's value and returns the field's new value. `values` holds what the
   * flags before it on the command line set (a repeatable flag adds to its earlier value,
   * exclusive flags look at each other). Absent: the value itself.
   * @throws UsageError naming the flag and the bad value.
   */
  readonly parse?: (text: string, values: Values) => Value
  /** What a missing value is called in the error, `--html needs a file name`; default `a value`. */
  readonly needs?: string
  /** Help lines: the first beside the flag (or below a long one), the rest below it. */
  readonly help: readonly string[]
}

/** A command's flags by the field each sets, in the order `--help` lists them. */
export type FlagTable<Values> = { readonly [Key in keyof Values]-?: Flag<Values[Key], Values> }

/** A command's flags, and the text its usage prints around them. */
export interface CommandFlags<Values> {
  /** The command, for messages: `run warmfold bench --help for the flags`. */
  readonly command: string
  /** The usage above `Options:`. */
  readonly synopsis: string
  /** The usage below the flags. */
  readonly footer: string
  /** Width of the usage's flag column; a longer flag has its help on the lines below it. */
  readonly column: number
  /** Whether the command takes arguments that are not flags (the log it reads). */
  readonly positionals: boolean
  readonly flags: FlagTable<Values>
}

/** A parsed command line. */
interface ParsedFlags<Values> {
  readonly values: Values
  /** The fields a flag on the command line set (the others hold their default). */
  readonly given: ReadonlySet<keyof Values>
  /** The arguments that are not flags, in order. */
  readonly positionals: readonly string[]
}

/**
 * Parses `argv` with `node:util`'s `parseArgs` (strict) against the command's table, then runs
 * each flag's validator in command-line order, so the first bad flag is the one named.
 * @throws UsageError naming an unknown flag, a missing value, a value given to a switch, an
 *   argument the command does not take, or what a flag's validator refused.
 */
export function parseFlags<Values>(command: CommandFlags<Values>, argv: readonly string[]): ParsedFlags<Values> {
  const flags = flagsOf(command)
  const options = Object.fromEntries(
    flags.map((flag) => [
      flag.name,
      { type: flag.value ? ('string' as const) : ('boolean' as const), ...(flag.short ? { short: flag.short } : {}) },
    ]),
  )
  const { tokens } = parseArgs({
    args: joinValues(command.command, command.positionals, flags, argv),
    options,
    strict: true,
    allowPositionals: command.positionals,
    tokens: true,
  })
  const values = Object.fromEntries(flags.map((flag) => [flag.key, flag.default])) as Values
  const given = new Set<keyof Values>()
  const positionals: string[] = []
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value)
    if (token.kind !== 'option') continue
    const flag = flags.find((entry) => entry.name === token.name) as NamedFlag<Values>
    const text = token.value ?? ''
    values[flag.key] = (flag.value === undefined ? true : flag.parse ? flag.parse(text, values) : text) as never
    given.add(flag.key)
  }
  return { values, given, positionals }
}

/**
 * `argv` with each value joined to its flag (`--stop=-x`): a value is the argument after its flag
 * even when it starts with `-` (a stop sequence; `--idle -1`, which the validator then refuses),
 * which `parseArgs` would take for a flag. What `parseArgs` would refuse in its own words is
 * refused here in this CLI's: the message names the flag or argument.
 */
function joinValues<Values>(
  command: string,
  positionals: boolean,
  flags: ReadonlyArray<NamedFlag<Values>>,
  argv: readonly string[],
): string[] {
  const args: string[] = []
  for (let index = 0; index < argv.length; index++) {
    const raw = argv[index] as string
    const unknown = `unknown flag ${JSON.stringify(raw)}; run warmfold ${command} --help for the flags`
    if (!raw.startsWith('-') || raw === '-') {
      if (!positionals) throw new UsageError(unknown)
      args.push(raw)
      continue
    }
    const equals = raw.startsWith('--') ? raw.indexOf('=') : -1
    const name = equals < 0 ? raw : raw.slice(0, equals)
    const flag = flags.find(
      (entry) => `--${entry.name}` === name || (entry.short !== undefined && `-${entry.short}` === name),
    )
    if (!flag) throw new UsageError(unknown)
    if (flag.value === undefined && equals >= 0)
      throw new UsageError(`${name} takes no value, got ${JSON.stringify(raw)}`)
    if (flag.value === undefined || equals >= 0) {
      args.push(raw)
      continue
    }
    const value = argv[++index]
    if (value === undefined) throw new UsageError(`${name} needs ${flag.needs ?? 'a value'}`)
    args.push(`${name}=${value}`)
  }
  return args
}

/** The command's `--help`: the synopsis, each flag with its help lines, then the footer. */
export function formatUsage<Values>(command: CommandFlags<Values>): string {
  const indent = ' '.repeat(command.column + 2)
  const lines = flagsOf(command).flatMap((flag) => {
    const label = `${flag.short ? `-${flag.short}, ` : ''}--${flag.name}${flag.value ? ` ${flag.value}` : ''}`
    const [first = '', ...rest] = flag.help
    const head =
      label.length <= command.column - 2
        ? [`  ${label.padEnd(command.column)}${first}`]
        : [`  ${label}`, indent + first]
    return [...head, ...rest.map((line) => indent + line)]
  })
  return `${command.synopsis}\n\nOptions:\n${lines.join('\n')}\n\n${command.footer}`
}

/** A flag with its name resolved, the field it sets and that field's value when the flag is not given. */
interface NamedFlag<Values> extends FlagFields<unknown, Values> {
  readonly name: string
  readonly default?: unknown
  readonly key: keyof Values
}

/** The command's flags in table order, each named. */
function flagsOf<Values>(command: CommandFlags<Values>): Array<NamedFlag<Values>> {
  return (Object.keys(command.flags) as Array<keyof Values & string>).map((key) => {
    const flag = command.flags[key] as Flag<unknown, Values>
    return { ...flag, key, name: flag.name ?? key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`) }
  })
}
