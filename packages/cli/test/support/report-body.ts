/**
 * A `warmfold report` terminal summary without what names where the log was read: its first
 * line and the session store's note. What is left is the same for a session read from a store
 * and for the JSONL file of the same run.
 */
export function reportBody(text: string): string {
  return text
    .split('\n')
    .slice(1)
    .filter((line) => !line.startsWith('  - Read from the session store '))
    .join('\n')
}
