import type { Message } from '@warmfold/llm'
import { loadCorpus } from '../../../../compaction/fold-audit/test/corpus-sample.ts'

/** One scripted step of a coding session: the tool call the model makes and what the tool returns. */
export interface CodingStep {
  /** A message the user types before the step, now and then. */
  readonly userBefore?: string
  readonly name: string
  /** Raw JSON arguments. */
  readonly arguments: string
  readonly result: string
  readonly isError: boolean
}

/** A source file of about `length` characters for step `step`: imports, constants, functions, comments, as an agent reads them. */
function sourceFile(step: number, length: number): string {
  const parts = [
    `import { Logger } from '../lib/logger-${step}.js'`,
    `import type { Order } from './orders/model-${step % 7}.ts'`,
    '',
  ]
  for (let index = 0; parts.join('\n').length < length; index++) {
    const name = `handle${step}x${index}`
    parts.push(
      `/** Retries up to ${(index % 5) + 2} times; the first delay is ${100 + index * 25}ms (see #${400 + step}). */`,
      `export async function ${name}(order: Order, logger: Logger): Promise<number> {`,
      `  const timeoutMs = ${1000 + index * 10}`,
      `  const budget = order.items.length * ${index + 3}`,
      `  if (budget > ${5000 + step}) logger.warn(\`order \${order.id} exceeds the budget after \${timeoutMs}ms\`)`,
      `  return budget + timeoutMs`,
      '}',
      '',
    )
  }
  return parts.join('\n')
}

/**
 * The steps of a realistic coding session, deterministic: the tool calls and outputs of the
 * labelled corpus (compiler errors, test runs, git, stack traces, listings, diffs, JSON,
 * package managers), their `src/` paths varied per step so the session holds many distinct
 * artifacts, a `read_file` of a source file of `fileChars` characters every third step, and a
 * user message every tenth step.
 */
export function codingSteps(count: number, fileChars: number): CodingStep[] {
  const pairs: { name: string; arguments: string; result: string; isError: boolean }[] = []
  const users: string[] = []
  for (const sample of loadCorpus()) {
    const messages: Message[] = sample.messages.map(({ message }) => message)
    for (const [index, message] of messages.entries()) {
      const block = message.content[0]
      if (message.role === 'user' && message.source.kind === 'user' && block?.type === 'text') users.push(block.text)
      const next = messages[index + 1]?.content[0]
      if (block?.type === 'tool-call' && next?.type === 'tool-result') {
        pairs.push({
          name: block.name,
          arguments: block.arguments,
          result: next.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n'),
          isError: next.isError === true,
        })
      }
    }
  }
  const steps: CodingStep[] = []
  for (let step = 0; step < count; step++) {
    const userBefore = step % 10 === 0 ? users[(step / 10) % users.length] : undefined
    const vary = (text: string): string => text.replaceAll('src/', `src/m${step}/`)
    if (step % 3 === 2) {
      steps.push({
        ...(userBefore === undefined ? {} : { userBefore }),
        name: 'read_file',
        arguments: JSON.stringify({ path: `src/m${step}/handlers.ts` }),
        result: sourceFile(step, fileChars),
        isError: false,
      })
      continue
    }
    const pair = pairs[step % pairs.length]!
    steps.push({
      ...(userBefore === undefined ? {} : { userBefore }),
      name: pair.name,
      arguments: vary(pair.arguments),
      result: vary(pair.result),
      isError: pair.isError,
    })
  }
  return steps
}
