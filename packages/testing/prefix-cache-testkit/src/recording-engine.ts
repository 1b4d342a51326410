import type {
  BasicCompactionEngine,
  PlannedPrune,
  PrunerSeam,
  SummaryRequestInput,
  SurfaceRegion,
} from '@warmfold/compaction-basic'
import type { GenerateOptions, Message } from '@warmfold/llm'
import type { Session } from '@warmfold/session'

/** The region of the summary request built last. */
export interface RegionRecord {
  latest?: readonly Message[]
}

/**
 * `engine` unchanged, except that it records the region of each summary request it builds, as
 * the conversation had it before the compaction's prune landed: `legacy` prunes the region
 * itself, and its summarizer must be measured against what it no longer sees.
 */
export function recordingEngine(
  engine: typeof BasicCompactionEngine,
  record: RegionRecord,
): typeof BasicCompactionEngine {
  return class RecordingEngine extends engine {
    private unpruned?: readonly Message[]

    protected override landPrunePlan(
      session: Session,
      pruner: PrunerSeam,
      plan: readonly PlannedPrune[],
      region: SurfaceRegion,
    ): void {
      this.unpruned = session.deriveMessages().slice(region.start, region.end + 1)
      super.landPrunePlan(session, pruner, plan, region)
    }

    protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
      // The first call of a pressure pass summarizes the region the plan was landed for; a retry
      // with a smaller head (another length) summarizes nodes the prune left alone.
      record.latest = this.unpruned?.length === input.regionMessages.length ? this.unpruned : input.regionMessages
      this.unpruned = undefined
      return super.buildSummaryRequest(input)
    }
  }
}
