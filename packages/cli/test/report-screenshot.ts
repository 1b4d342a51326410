/**
 * Makes the report screenshot the READMEs show (`packages/cli/docs/report.png`): the bench's
 * `legacy` session at a 32,000-token window over 40 steps, with a `cache/observation` event per
 * request (see `workloadSessionLog`), reported with `warmfold report --out` and photographed in
 * headless Chromium.
 *
 *   npx -y pnpm@12.4.2 exec tsx packages/cli/test/report-screenshot.ts
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium } from 'playwright-core'
import { runCli } from '../src/index.ts'
import { workloadSessionLog } from './report-fixtures.ts'

const target = resolve(import.meta.dirname, '../docs/report.png')
const directory = await mkdtemp(join(tmpdir(), 'warmfold-report-screenshot-'))
try {
  const { file } = await workloadSessionLog(directory, 'legacy-32000', { window: 32000, steps: 40, strategy: 'legacy' })
  const html = join(directory, 'report.html')
  // Relative names, so the page shows the log's name rather than a temporary folder.
  process.chdir(directory)
  const code = await runCli(['report', basename(file), '--out', 'report.html'], {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(`${text}\n`),
  })
  if (code !== 0) throw new Error(`warmfold report exited ${code}`)
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
    await page.goto(pathToFileURL(html).href)
    await page.screenshot({ path: target, fullPage: true })
  } finally {
    await browser.close()
  }
  console.log(`wrote ${target}`)
} finally {
  await rm(directory, { recursive: true, force: true })
}
