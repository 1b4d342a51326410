import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { ArtifactClass, LoggedMessage } from '../src/index.ts'
import { ARTIFACT_CLASSES, isArtifactClass } from '../src/artifact.ts'

/** One labelled sample of `test/corpus` (format in `test/corpus/LABELLING.md`). */
export interface CorpusSample {
  readonly name: string
  readonly messages: readonly LoggedMessage[]
  /** The hand-written artifacts per class (a class without a section has none). */
  readonly expected: Readonly<Record<ArtifactClass, readonly string[]>>
}

export const CORPUS_FOLDER = join(import.meta.dirname, 'corpus')
const ROUTE = { provider: 'corpus', model: 'labelled' }

/** Parses one `.sample` file; throws naming the file and line for anything it does not understand. */
export function parseSample(name: string, text: string): CorpusSample {
  const sections: { header: string; line: number; body: string[] }[] = []
  for (const [index, line] of text.split('\n').entries()) {
    if (line.startsWith('%%% ')) sections.push({ header: line.slice(4).trim(), line: index + 1, body: [] })
    else if (sections.length === 0) throw new Error(`${name}:${index + 1}: text before the first %%% section`)
    else sections.at(-1)!.body.push(line)
  }
  const messages: Message[] = []
  const expected = Object.fromEntries(
    ARTIFACT_CLASSES.map((artifactClass) => [artifactClass, [] as string[]]),
  ) as Record<ArtifactClass, string[]>
  let lastCallId: string | undefined
  for (const { header, line, body } of sections) {
    const content = body.join('\n').replace(/\n+$/, '')
    const [kind, ...rest] = header.split(' ')
    const argument = rest.join(' ')
    if (kind === 'user') messages.push(createUserMessage(content))
    else if (kind === 'assistant') messages.push(createAssistantMessage([textBlock(content)], ROUTE))
    else if (kind === 'call') {
      lastCallId = `call-${messages.length}`
      JSON.parse(content)
      messages.push(createAssistantMessage([toolCallBlock(lastCallId, argument, content)], ROUTE))
    } else if (kind === 'result') {
      if (lastCallId === undefined) throw new Error(`${name}:${line}: a result without a call before it`)
      messages.push(createToolResultMessage(lastCallId, content, { isError: argument === 'error' }))
    } else if (kind === 'expected') {
      if (!isArtifactClass(argument)) throw new Error(`${name}:${line}: unknown class ${JSON.stringify(argument)}`)
      const items = body.filter((item) => item.trim() !== '')
      if (new Set(items).size !== items.length) throw new Error(`${name}:${line}: a ${argument} item is listed twice`)
      expected[argument].push(...items)
    } else if (kind !== 'note') throw new Error(`${name}:${line}: unknown section ${JSON.stringify(header)}`)
  }
  return { name, messages: messages.map((message, seq) => ({ seq, message })), expected }
}

/**
 * The held-out samples: labelled by hand and committed before the extractor first ran on them,
 * and never used to change it (see LABELLING.md).
 */
export const HELD_OUT_FOLDER = join(import.meta.dirname, 'held-out')

/** Every sample of `folder` (default: the development corpus), sorted by file name. */
export function loadCorpus(folder = CORPUS_FOLDER): CorpusSample[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.sample'))
    .toSorted()
    .map((file) => parseSample(file, readFileSync(join(folder, file), 'utf8')))
}
