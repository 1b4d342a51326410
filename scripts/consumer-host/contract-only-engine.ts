/**
 * An engine written from the `@warmfold/compaction` contract alone: it implements the three
 * abstract methods and nothing else (no listeners of its own). The consumer test mounts it in
 * place of `BasicCompactionEngine` and checks that the agent loop still triggers it.
 */
import type { Context } from '@cordisjs/core'
import type { CompactionAgent, CompactionResult, CompactionTrigger, ManualCompactionAgent } from '@warmfold/compaction'
import { CompactionEngine } from '@warmfold/compaction'

/** Every `compactIfNeeded` call any ContractOnlyEngine received, in order. */
export const contractOnlyCalls: { readonly sessionId: string; readonly trigger: CompactionTrigger }[] = []

export class ContractOnlyEngine extends CompactionEngine<ContractOnlyEngine.Config> {
  constructor(ctx: Context, config: ContractOnlyEngine.Config) {
    super(ctx, config)
  }

  async compactIfNeeded(agent: CompactionAgent, trigger: CompactionTrigger): Promise<CompactionResult | null> {
    contractOnlyCalls.push({ sessionId: agent.session.id, trigger })
    return null
  }

  async compactNow(agent: ManualCompactionAgent): Promise<CompactionResult | null> {
    return agent.runMaintenance(async () => null)
  }

  async compactRegion(start: number, end: number): Promise<CompactionResult> {
    throw new RangeError(`ContractOnlyEngine compacts nothing (asked for positions ${start}..${end})`)
  }
}

export namespace ContractOnlyEngine {
  export interface Config {}
}
