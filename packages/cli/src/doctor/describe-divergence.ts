import type { DoctorDivergence } from './doctor-report.ts'

const number = new Intl.NumberFormat('en-US')

/** One phrase saying where a request first differs from its best match, e.g. `message 4 (tool) at char 2,310`. */
export function describeDivergence(divergence: DoctorDivergence): string {
  const at = divergence.charOffset === undefined ? '' : ` at char ${number.format(divergence.charOffset)}`
  switch (divergence.part) {
    case 'first':
      return 'first of its kind: no earlier request to reuse'
    case 'none':
      return 'whole prompt sent before'
    case 'envelope':
      return `another cache family: ${divergence.field} differs`
    case 'tools':
      return `tools differ from tool ${divergence.toolIndex}${at}`
    case 'system':
      return `system prompt differs${at}`
    case 'messages':
      return `message ${divergence.messageIndex} (${divergence.role})${at}`
  }
}

/** `1,234` */
export function formatCount(value: number): string {
  return number.format(value)
}
