import fc from 'fast-check'
import { JinjaTemplateChatWrapper } from 'node-llama-cpp'
import { describe, expect, it } from 'vitest'
import type { PromptInput, PromptMessage } from '../src/render-prompt.ts'
import { jinjaToJson, renderPrompt } from '../src/render-prompt.ts'
import { TINY_CHAT_TEMPLATE } from '../src/chat-template.ts'

/**
 * The jinja engine node-llama-cpp uses (`@huggingface/jinja` behind its Jinja chat wrapper). The
 * renderer is an internal field of the pinned 3.21.1; reaching it keeps this package free of a
 * direct jinja dependency while comparing against a real jinja implementation.
 */
function jinjaRenderer(): (variables: PromptInput) => string {
  const wrapper = new JinjaTemplateChatWrapper({ template: TINY_CHAT_TEMPLATE })
  const renderer = Reflect.get(wrapper, '_jinjaTemplate') as { render(variables: unknown): string }
  return (variables) => renderer.render(variables)
}

const conversation: PromptInput = {
  reasoning_effort: 'max',
  tools: [
    {
      type: 'function',
      function: {
        name: 'read',
        description: 'Read "a" file — ü',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], n: 1.5, m: null },
      },
    },
  ],
  messages: [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix {{ the }} test.' },
    {
      role: 'assistant',
      content: null,
      reasoning_content: 'Look first.',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path": "a.ts"}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1\n' },
    { role: 'assistant', content: 'Done.' },
  ],
  add_generation_prompt: true,
}

describe('renderPrompt', () => {
  it('puts the reasoning effort on the first line, then the system prompt, the tools and the other messages, ending with the assistant header', () => {
    expect(renderPrompt(conversation)).toBe(
      'Reasoning effort: max\n' +
        '<|system|>You are a coding agent.<|end|>\n' +
        '<|tools|>{"type": "function", "function": {"name": "read", "description": "Read \\"a\\" file — ü", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "n": 1.5, "m": null}}}\n<|end|>\n' +
        '<|user|>Fix {{ the }} test.<|end|>\n' +
        '<|assistant|><think>Look first.</think><tool_call>c1 read {"path": "a.ts"}</tool_call><|end|>\n' +
        '<|tool|>c1\nexport const a = 1\n<|end|>\n' +
        '<|assistant|>Done.<|end|>\n' +
        '<|assistant|>',
    )
  })

  it('renders no effort line and no tools block when they are absent or empty', () => {
    const text = renderPrompt({ messages: [{ role: 'user', content: 'hi' }], tools: [], reasoning_effort: '' })
    expect(text).toBe('<|user|>hi<|end|>\n')
  })

  it('puts the tools first when there is no leading system message, and later system messages in place', () => {
    const text = renderPrompt({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'developer', content: 'note' },
      ],
      tools: [{ a: 1 }],
    })
    expect(text).toBe('<|tools|>{"a": 1}\n<|end|>\n<|user|>hi<|end|>\n<|system|>note<|end|>\n')
  })

  it('is byte-identical to the embedded jinja template on a scripted conversation', () => {
    expect(renderPrompt(conversation)).toBe(jinjaRenderer()(conversation))
  })

  it('is byte-identical to the embedded jinja template on arbitrary requests', () => {
    const render = jinjaRenderer()
    const text = fc.string({ unit: 'binary', maxLength: 40 })
    const call = fc.record({
      id: text,
      type: fc.constant('function' as const),
      function: fc.record({ name: text, arguments: text }),
    })
    const message: fc.Arbitrary<PromptMessage> = fc.oneof(
      fc.record({ role: fc.constantFrom('system' as const, 'developer' as const, 'user' as const), content: text }),
      fc.record(
        {
          role: fc.constant('assistant' as const),
          content: fc.option(text),
          reasoning_content: text,
          tool_calls: fc.array(call, { maxLength: 3 }),
        },
        { requiredKeys: ['role', 'content'] },
      ),
      fc.record({ role: fc.constant('tool' as const), content: text, tool_call_id: text }),
    )
    const input: fc.Arbitrary<PromptInput> = fc.record(
      {
        messages: fc.array(message, { maxLength: 6 }),
        tools: fc.array(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), {
          maxLength: 3,
        }),
        reasoning_effort: fc.constantFrom('', 'low', 'high', 'max'),
        add_generation_prompt: fc.boolean(),
      },
      { requiredKeys: ['messages'] },
    )
    fc.assert(
      fc.property(input, (variables) => renderPrompt(variables) === render(variables)),
      { numRuns: 300 },
    )
  })
})

describe('jinjaToJson', () => {
  it('writes Python-style separators and keeps key order and non-ASCII text', () => {
    expect(jinjaToJson({ b: [1, 2.5, true, null], a: { ü: 'x"y' } })).toBe(
      '{"b": [1, 2.5, true, null], "a": {"ü": "x\\"y"}}',
    )
    expect(jinjaToJson([])).toBe('[]')
    expect(jinjaToJson({})).toBe('{}')
  })
})
