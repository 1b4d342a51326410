import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import type { ConfigParser, Message, Parsed, ToolDefinition, WarmfoldPluginInfo } from '@warmfold/llm'
import { strictConfig, WARMFOLD_PLUGIN } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import Schema from 'schemastery'
import type { TextTokenCounter } from './estimate.ts'
import { createTextCounter, estimateMessageTokens, estimateSystemTokens, estimateToolsTokens } from './estimate.ts'
import { SessionPriceState } from './session-price-state.ts'
import type { SessionPricer } from './session-price-state.ts'
import type { TokenMeasurement } from './token-measurement.ts'

declare module '@cordisjs/core' {
  interface Context {
    tokenMeter: TokenMeter
  }
}

/** What a meter holds: its text price, its pricer and its per-session states. */
interface MeterInternals {
  /** Text price used for every text: the configured tokenizer (checked) or `ceil(length / 4)`. */
  readonly countText: TextTokenCounter
  readonly pricer: SessionPricer
  /** Per-session state of this meter; a second meter measuring the same session keeps its own. */
  readonly states: WeakMap<Session, SessionPriceState>
}

/**
 * Key of a meter's internals. Methods run with `this` bound to cordis's traceable proxy, which
 * creates a shadow context on every string-keyed property read (about a microsecond each) but
 * passes symbol-keyed reads straight through. Reading everything through one symbol keeps a
 * call's overhead to the method lookup cordis itself charges.
 */
const INTERNALS = Symbol('TokenMeter.internals')

/**
 * The `ctx.tokenMeter` service: prices every surface node and the request envelope of a
 * session, incrementally, and anchors the total on the provider's reported usage when the
 * envelope of that request is still the one in force.
 *
 * The meter only reads sessions; it never writes to the log or changes a prompt byte.
 */
export class TokenMeter extends Service<TokenMeter.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@warmfold/token-meter',
    provides: 'ctx.tokenMeter',
  }
  static [Service.provide] = 'tokenMeter'
  static [Service.immediate]: boolean = true

  private readonly [INTERNALS]: MeterInternals

  constructor(ctx: Context, config: Parsed<TokenMeter.Config>) {
    super(ctx, config)
    const countText = createTextCounter(config.tokenizer)
    this[INTERNALS] = {
      countText,
      pricer: {
        message: (message) => estimateMessageTokens(message, countText),
        envelope: (header) =>
          estimateSystemTokens(header.system, countText) + estimateToolsTokens(header.tools, countText),
      },
      states: new WeakMap(),
    }
  }

  /**
   * Estimated prompt tokens of one message: `ROLE_OVERHEAD` (4) plus each block's price
   * (text and reasoning `text + 4`, tool call `name + arguments + 4`, tool result
   * `4 + inner blocks`, image `IMAGE_TOKENS` = 1000). A whole number `>= 4`.
   * @throws RangeError when the configured tokenizer returns an invalid count.
   */
  estimateMessage(message: Message): number {
    return estimateMessageTokens(message, this[INTERNALS].countText)
  }

  /**
   * Estimated tokens of a system prompt: `text(system) + 4`, or `0` when absent or empty.
   * @throws RangeError when the configured tokenizer returns an invalid count.
   */
  estimateSystem(system?: string): number {
    return estimateSystemTokens(system, this[INTERNALS].countText)
  }

  /**
   * Estimated tokens of a tool list: `text(canonicalJson(tools)) + 4`, or `0` when absent or
   * empty.
   * @throws RangeError when the configured tokenizer returns an invalid count.
   */
  estimateTools(tools?: readonly ToolDefinition[]): number {
    return estimateToolsTokens(tools, this[INTERNALS].countText)
  }

  /**
   * Measures the next request of `session`: the price of every current surface node, of the
   * envelope (system prompt and tools of `session.requestHeader()`), and the best total,
   * anchored on provider usage when allowed (see the README's anchor rule).
   *
   * Costs O(k) for the k events logged since this meter last saw the session (a replace also
   * copies the node list once); calling it again with nothing new returns the same frozen
   * object. `nodes` is computed on first read.
   * @throws RangeError when the configured tokenizer returns an invalid count.
   */
  measure(session: Session): TokenMeasurement {
    return stateOf(this[INTERNALS], session).measure(session)
  }

  /**
   * The price of the surface event at `seq`, whether it is on the surface now or was
   * shadowed by a replace (what a compaction event records as the shadowed token count).
   * @throws RangeError when `seq` is not in the log or is not a surface event.
   */
  priceOf(session: Session, seq: number): number {
    return stateOf(this[INTERNALS], session).priceOf(session, seq)
  }
}

function stateOf(internals: MeterInternals, session: Session): SessionPriceState {
  let state = internals.states.get(session)
  if (!state) internals.states.set(session, (state = new SessionPriceState(internals.pricer)))
  return state
}

export namespace TokenMeter {
  export interface Config {
    /**
     * Counts the tokens of one text, used instead of `ceil(text.length / 4)` for every text
     * the meter prices. Must return a finite number `>= 0` (fractions are rounded up).
     */
    tokenizer?: (text: string) => number
  }
  export const Config: ConfigParser<Config> = strictConfig(
    'TokenMeter',
    Schema.object({
      tokenizer: Schema.function().description('Counts the tokens of one text; default ceil(length / 4).'),
    }),
  ) as ConfigParser<Config>
}
