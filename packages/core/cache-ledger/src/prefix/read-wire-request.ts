import type { CanonicalRequest, RequestApi, WireRequest } from './canonical-request.ts'
import { RequestShapeError } from './canonical-request.ts'
import { canonicalWireJson } from './canonical-json.ts'
import { canonicalize } from './canonicalize.ts'
import type { SeenRequest } from './compare-seen-requests.ts'
import type { DetectedBy } from './detect-api.ts'
import { detectApi } from './detect-api.ts'
import type { SegmentInterner } from './segment-interner.ts'
import { layoutOf } from './prompt-layout.ts'

/** A wire request read as its API: its canonical form, or why it cannot be read. */
export type WireReading =
  | { readonly canonical: CanonicalRequest; readonly by: DetectedBy }
  | { readonly error: string; readonly api?: RequestApi }

/**
 * Tells `request`'s API ({@link detectApi}, `previous` the API of the last `messages` request
 * before it) and canonicalizes it; a body that does not have its API's shape gives the reason
 * (`not a valid … body (detected by …): …`). The one reading the doctor and the proxy share.
 */
export function readWireRequest(request: WireRequest, previous: RequestApi | undefined): WireReading {
  const detection = detectApi(request, previous)
  if ('error' in detection) return { error: detection.error }
  try {
    return { canonical: canonicalize(request, detection.api), by: detection.by }
  } catch (error) {
    if (!(error instanceof RequestShapeError)) throw error
    return {
      error: `not a valid ${detection.api} body (detected by ${detection.by}): ${error.message}`,
      api: detection.api,
    }
  }
}

/**
 * What is kept of `canonical` once read: its cache family (api + canonical envelope), its envelope
 * settings as canonical JSON and its layout, interned in `interner` (one reference per segment).
 */
export function seenRequestOf(
  canonical: CanonicalRequest,
  interner: SegmentInterner,
  index: number,
  t?: number,
): SeenRequest {
  const envelope = new Map(
    Object.entries(canonical.envelope).map(([field, value]) => [field, canonicalWireJson(value)] as const),
  )
  return {
    index,
    api: canonical.api,
    family: `${canonical.api} ${canonicalWireJson(canonical.envelope)}`,
    envelope,
    layout: layoutOf(canonical, interner),
    ...(t === undefined ? {} : { t }),
  }
}
