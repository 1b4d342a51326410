import type { CanonicalMessage, CanonicalRequest, EnvelopeRules } from './canonical-request.ts'
import { arrayOf, collectEnvelope, isRecord, listOf, modelOf, recordOf, stopList } from './canonical-request.ts'
import { withoutKeys } from './canonical-json.ts'

/** Gemini `generateContent` / `streamGenerateContent` (Google AI and Vertex AI). */
const GEMINI_RULES: EnvelopeRules = {
  structural: [
    'contents',
    'systemInstruction',
    'system_instruction',
    'tools',
    'generationConfig',
    'generation_config',
    'model',
  ],
  noise: ['labels'],
  renames: {
    toolConfig: 'toolChoice',
    tool_config: 'toolChoice',
    cachedContent: 'cachedContent',
    cached_content: 'cachedContent',
    safety_settings: 'safetySettings',
  },
}

/** generationConfig keys that set the output's size or count, not the prompt. */
const OUTPUT_ONLY = [
  'maxOutputTokens',
  'candidateCount',
  'seed',
  'responseLogprobs',
  'logprobs',
  'max_output_tokens',
  'candidate_count',
  'response_logprobs',
]
const SAMPLING: Readonly<Record<string, string>> = {
  temperature: 'temperature',
  topP: 'topP',
  top_p: 'topP',
  topK: 'topK',
  top_k: 'topK',
  stopSequences: 'stop',
  stop_sequences: 'stop',
}
const FORMAT = [
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'response_mime_type',
  'response_schema',
  'response_json_schema',
]

/**
 * Canonical form of a Gemini body. The model comes from the URL (`models/NAME:generateContent`)
 * unless the body names one. `generationConfig` is unpacked: sampling keys by their canonical
 * names, `thinkingConfig.thinkingLevel` as the reasoning effort and the rest of `thinkingConfig`
 * as `thinking`, the response MIME type and schemas as `responseFormat`.
 */
export function canonicalizeGemini(body: Readonly<Record<string, unknown>>, url: string | undefined): CanonicalRequest {
  const envelope = collectEnvelope(body, GEMINI_RULES)
  const model = modelOf(body) ?? modelFromUrl(url)
  if (model !== null) envelope.model = model
  const config = body.generationConfig ?? body.generation_config
  if (config !== undefined && config !== null) {
    const format: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(recordOf(config, 'generationConfig'))) {
      if (value === null || value === undefined || OUTPUT_ONLY.includes(key)) continue
      if (SAMPLING[key]) envelope[SAMPLING[key]] = key.startsWith('stop') ? stopList(value) : value
      else if (FORMAT.includes(key)) format[key] = value
      else if (key === 'thinkingConfig' || key === 'thinking_config') {
        const thinking = recordOf(value, `generationConfig.${key}`)
        const level = thinking.thinkingLevel ?? thinking.thinking_level
        if (level !== undefined && level !== null) envelope.reasoningEffort = level
        const rest = withoutKeys(thinking, ['thinkingLevel', 'thinking_level'])
        if (Object.keys(rest).length) envelope.thinking = rest
      } else envelope[`generationConfig.${key}`] = value
    }
    if (Object.keys(format).length) envelope.responseFormat = format
  }
  const system = body.systemInstruction ?? body.system_instruction
  const messages: CanonicalMessage[] = arrayOf(body.contents, 'contents').map((item, index) => {
    const content = recordOf(item, `contents[${index}]`)
    const role = typeof content.role === 'string' ? content.role : 'user'
    return { role, index, value: { ...content, role } }
  })
  const tools: unknown[] = []
  for (const tool of listOf(body.tools, 'tools')) {
    // One entry per function declaration, so adding one tool is not a change of every tool.
    const declarations = isRecord(tool) ? (tool.functionDeclarations ?? tool.function_declarations) : undefined
    if (Array.isArray(declarations)) {
      for (const declaration of declarations) tools.push({ functionDeclaration: declaration })
      const rest = withoutKeys(tool as Record<string, unknown>, ['functionDeclarations', 'function_declarations'])
      if (Object.keys(rest).length) tools.push(rest)
    } else tools.push(tool)
  }
  return {
    api: 'gemini',
    model,
    envelope,
    ...(system === undefined || system === null ? {} : { system: systemOf(system) }),
    tools,
    messages,
  }
}

/** A system instruction without its role (the SDK sends `role: 'user'` or none): a string is one text part. */
function systemOf(system: unknown): unknown {
  if (typeof system === 'string') return { parts: [{ text: system }] }
  return withoutKeys(recordOf(system, 'systemInstruction'), ['role'])
}

/** The model of a Gemini URL: `…/models/NAME:generateContent` (also under `projects/…/publishers/google/`). */
function modelFromUrl(url: string | undefined): string | null {
  const match = url === undefined ? null : /\/models\/([^/:?]+):/.exec(url)
  return match ? decodeURIComponent(match[1] as string) : null
}
