import { afterFoldBehaviour } from '@warmfold/fold-audit'
import type { LoggedMessage } from '@warmfold/fold-audit'
import { createAssistantMessage, createToolResultMessage, toolCallBlock } from '@warmfold/llm'

const route = { provider: 'deepseek', model: 'deepseek-v4-flash' }
const read = (seq: number, id: string, path: string): LoggedMessage[] => [
  { seq, message: createAssistantMessage([toolCallBlock(id, 'read_file', JSON.stringify({ path }))], route) },
  { seq: seq + 1, message: createToolResultMessage(id, `contents of ${path}`) },
]

/** What the agent did in the steps after a fold, from the log alone. */
export function main() {
  const folded = [...read(0, 'a', 'src/parser.ts'), ...read(2, 'b', 'src/lexer.ts')]
  const after = [
    ...read(10, 'c', 'src/parser.ts'), // the fold dropped it, the agent reads it again
    { seq: 12, message: createAssistantMessage([toolCallBlock('d', 'edit_file', '{"path":"src/parser.ts"}')], route) },
  ]
  const behaviour = afterFoldBehaviour({
    folded,
    after,
    // Declared kinds win over the name heuristic (bash is `write` by default).
    toolKinds: { read_file: 'read', edit_file: 'write' },
    windowSteps: 10,
  })
  // behaviour.repeatedReads → [{ seq: 10, name: 'read_file', … foldedSeq: 0 }], repeatRate 1,
  // baselineRepeatRate 0, stepsToFirstWrite 2
  return behaviour
}
