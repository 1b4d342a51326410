import { Context } from '@cordisjs/core'
import { WarmfoldProxy } from '@warmfold/proxy'

export async function main(upstream = 'https://api.anthropic.com') {
  const ctx = new Context()
  await ctx.start()
  // Defaults: host 127.0.0.1, port 8787 (0: any free port), warmSummaries 'off'.
  ctx.plugin(WarmfoldProxy, { upstream, port: 0 })
  await ctx.lifecycle.flush() // the server listens once the plugin has started

  // Point the agent at it, e.g. ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude
  const url = ctx.proxy.address?.url
  await ctx.stop() // closes the server
  return url
}
