/** The report page's CSS, inline in its `<style>`. */
export const REPORT_STYLE = [
  '',
  ':root { --cached: #2f9e5f; --written: #e3a21a; --uncached: #d8453b; --fold: #3157d5; --prune: #8b4fd0; --ink: ' +
    '#1d2330; --muted: #5f6878; }',
  '* { box-sizing: border-box; }',
  'body { margin: 24px 32px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: ' +
    'var(--ink); background: #fff; }',
  'h1 { font-size: 22px; margin: 0 0 4px; } h1 .session { font-weight: 400; color: var(--muted); }',
  'h2 { font-size: 16px; margin: 28px 0 8px; }',
  '.file, .price, .hint { color: var(--muted); margin: 2px 0; }',
  '.source { margin: 6px 0; padding: 6px 10px; border-left: 4px solid var(--cached); background: #f3f8f4; }',
  '.source-usage { border-left-color: var(--written); background: #fdf7ea; }',
  'table { border-collapse: collapse; }',
  '.totals th { text-align: left; font-weight: 500; padding: 2px 18px 2px 0; color: var(--muted); }',
  '.totals td { padding: 2px 0; font-variant-numeric: tabular-nums; }',
  '.breaks, .guards { width: 100%; }',
  '.breaks th, .breaks td, .guards th, .guards td { border-bottom: 1px solid #e4e7ec; padding: 4px 8px; ' +
    'text-align: left; vertical-align: top; }',
  '.breaks td.number { text-align: right; font-variant-numeric: tabular-nums; }',
  '.breaks tr:target { background: #fff6d6; }',
  '.cause { display: inline-block; padding: 0 6px; border-radius: 8px; background: #eef0f4; }',
  '.cause-fold { background: #e3e9fb; } .cause-prune { background: #efe5fa; } .cause-envelope, .cause-tools { ' +
    'background: #fbe4e2; } .cause-expired, .cause-provider { background: #fdf1d8; }',
  '.legend { list-style: none; padding: 0; margin: 4px 0 8px; display: flex; flex-wrap: wrap; gap: 4px 16px; ' +
    'color: var(--muted); }',
  '.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px; }',
  '.swatch.cached { background: var(--cached); } .swatch.written { background: var(--written); } ' +
    '.swatch.uncached { background: var(--uncached); }',
  '.swatch.none { background: repeating-linear-gradient(45deg, #b9b9b9 0 3px, #fff 3px 6px); }',
  '.swatch.break { width: 0; height: 0; border: 6px solid transparent; border-top: 10px solid var(--ink); ' +
    'border-bottom: 0; }',
  '.swatch.purpose { width: 9px; height: 9px; transform: rotate(45deg); background: var(--muted); }',
  '.swatch.fold { width: 3px; background: var(--fold); } .swatch.prune { width: 3px; background: var(--prune); }',
  '.chart-scroll { overflow-x: auto; border: 1px solid #e4e7ec; border-radius: 6px; padding: 6px 0; }',
  '.chart { display: block; font: 11px system-ui, sans-serif; }',
  '.chart.fit { width: 100%; height: auto; min-width: 640px; }',
  '.chart .grid { stroke: #edf0f3; } .chart .axis-line { stroke: #9aa2ae; } .chart .axis { fill: var(--muted); }',
  '.chart .seg.cached { fill: var(--cached); } .chart .seg.written { fill: var(--written); } .chart ' +
    '.seg.uncached { fill: var(--uncached); }',
  '.chart .hover { fill: transparent; } .chart .request:hover .hover, .chart .request:target .hover { fill: ' +
    'rgba(29, 35, 48, 0.08); }',
  '.chart .break-mark { fill: var(--ink); } .chart .purpose-mark { fill: var(--muted); }',
  '.chart .break-mark.cause-fold { fill: var(--fold); } .chart .break-mark.cause-prune { fill: var(--prune); } ' +
    '.chart .break-mark.cause-envelope, .chart .break-mark.cause-tools { fill: var(--uncached); } .chart ' +
    '.break-mark.cause-expired, .chart .break-mark.cause-provider { fill: var(--written); }',
  '.chart .marker line { stroke-width: 1.5; stroke-dasharray: 4 3; } .chart .marker text { font-weight: 600; }',
  '.chart .marker.fold line { stroke: var(--fold); } .chart .marker.fold text { fill: var(--fold); }',
  '.chart .marker.prune line { stroke: var(--prune); } .chart .marker.prune text { fill: var(--prune); }',
  '',
].join('\n')
