/**
 * The jinja chat template embedded in the generated GGUF as `tokenizer.chat_template`.
 * {@link renderPrompt} implements the same format in TypeScript, byte for byte; the test suite
 * renders both over the same (and over arbitrary) requests and compares them.
 *
 * Variables: `messages` (content already a string or null), optional `tools` (rendered as given,
 * one `tojson` line each), optional `reasoning_effort` and `add_generation_prompt`.
 *
 * Layout, every marker being one control token. As in DeepSeek V4 and gpt-oss, the effort comes
 * first; as in most open-weight templates (Qwen, DeepSeek, gpt-oss), a leading system prompt comes
 * before the tools:
 * ```
 * Reasoning effort: max            ← first line when an effort is given
 * <|system|>...<|end|>             ← the first message, when it is a system/developer message
 * <|tools|>{"type": "function", ...}
 * <|end|>
 * <|user|>...<|end|>
 * <|assistant|><think>reasoning</think>content<tool_call>id name {"args"}</tool_call><|end|>
 * <|tool|>id
 * result<|end|>
 * <|assistant|>                    ← generation prompt, no trailing text
 * ```
 * Later system messages render in place. The BOS token is not part of the template: the
 * tokenizer prepends it (`add_bos_token`).
 */
export const TINY_CHAT_TEMPLATE = [
  '{%- if reasoning_effort is defined and reasoning_effort -%}',
  "{{- 'Reasoning effort: ' + reasoning_effort + '\\n' -}}",
  '{%- endif -%}',
  "{%- set leading_system = messages | length > 0 and (messages[0].role == 'system' or messages[0].role == " +
    "'developer') -%}",
  '{%- if leading_system -%}',
  "{{- '<|system|>' + messages[0].content + '<|end|>\\n' -}}",
  '{%- endif -%}',
  '{%- if tools is defined and tools -%}',
  "{{- '<|tools|>' -}}",
  '{%- for tool in tools -%}',
  '{{- tool | tojson -}}',
  "{{- '\\n' -}}",
  '{%- endfor -%}',
  "{{- '<|end|>\\n' -}}",
  '{%- endif -%}',
  '{%- for message in messages -%}',
  '{%- if loop.first and leading_system -%}',
  "{%- elif message.role == 'system' or message.role == 'developer' -%}",
  "{{- '<|system|>' + message.content + '<|end|>\\n' -}}",
  "{%- elif message.role == 'user' -%}",
  "{{- '<|user|>' + message.content + '<|end|>\\n' -}}",
  "{%- elif message.role == 'assistant' -%}",
  "{{- '<|assistant|>' -}}",
  '{%- if message.reasoning_content is defined and message.reasoning_content -%}',
  "{{- '<think>' + message.reasoning_content + '</think>' -}}",
  '{%- endif -%}',
  '{%- if message.content is defined and message.content -%}',
  '{{- message.content -}}',
  '{%- endif -%}',
  '{%- if message.tool_calls is defined and message.tool_calls -%}',
  '{%- for call in message.tool_calls -%}',
  "{{- '<tool_call>' + call.id + ' ' + call.function.name + ' ' + call.function.arguments + '</tool_call>' -}}",
  '{%- endfor -%}',
  '{%- endif -%}',
  "{{- '<|end|>\\n' -}}",
  "{%- elif message.role == 'tool' -%}",
  "{{- '<|tool|>' + message.tool_call_id + '\\n' + message.content + '<|end|>\\n' -}}",
  '{%- endif -%}',
  '{%- endfor -%}',
  '{%- if add_generation_prompt is defined and add_generation_prompt -%}',
  "{{- '<|assistant|>' -}}",
  '{%- endif -%}',
].join('')
