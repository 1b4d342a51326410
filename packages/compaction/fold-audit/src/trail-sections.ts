/** The sections of the trail, in the order they are written. */
export const TRAIL_SECTIONS = [
  'filesChanged',
  'filesRead',
  'otherPaths',
  'commands',
  'openProblems',
  'userConstraints',
  'hostEntries',
] as const

/** A section of the trail (see {@link TRAIL_SECTIONS}). */
export type TrailSection = (typeof TRAIL_SECTIONS)[number]

/** A count of 0 for every section, in writing order. */
export function zeroCounts(): Record<TrailSection, number> {
  return Object.fromEntries(TRAIL_SECTIONS.map((section) => [section, 0])) as Record<TrailSection, number>
}

/** The heading that opens a trail, and the section headings, as `buildArtifactTrail` writes them. */
export const TRAIL_HEADING = '## Artifact Trail'

/** The section titles, in writing order. */
export const TRAIL_TITLES: Readonly<Record<TrailSection, string>> = {
  filesChanged: 'Files changed',
  filesRead: 'Files read',
  otherPaths: 'Other paths named',
  commands: 'Commands run',
  openProblems: 'Open problems',
  userConstraints: 'User constraints and corrections',
  hostEntries: 'Noted by the host',
}
