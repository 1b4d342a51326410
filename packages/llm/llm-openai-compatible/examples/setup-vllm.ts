import type { Context } from '@cordisjs/core'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'

export function mountVllm(ctx: Context, baseURL = 'http://127.0.0.1:8000/v1') {
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'vllm',
    baseURL,
    dialect: 'vllm',
    models: { 'Qwen/Qwen3-8B': { contextWindow: 32768, defaultMaxTokens: 4096 } },
  })
}
