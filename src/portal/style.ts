/**
 * The portal's one stylesheet, served at `/portal/assets/style.css` (a file
 * rather than inline, so the pages' Content-Security-Policy can forbid inline
 * styles and scripts). System fonts only: the portal makes no request off the
 * service's origin except for artifacts.
 */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1d2430; --muted: #5d6878; --bg: #f6f7f9; --card: #fff; --line: #dde1e7;
  --accent: #2457c5; --good: #17803d; --bad: #c0352b; --warn: #9a5b00; --base: #8a94a3; --cand: #2457c5; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e3e7ee; --muted: #9aa5b5; --bg: #14171c; --card: #1c2027; --line: #2e343e;
    --accent: #7aa2ff; --good: #4cc47a; --bad: #ff7a6e; --warn: #e6a23c; --base: #8a94a3; --cand: #7aa2ff; }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
/* Links inside running text are underlined: their colour alone is too close to the text's. */
.sub a, p a, li a, dd a, figcaption a, .legend a, td.head a { text-decoration: underline; text-underline-offset: 2px; }
.skip { position: absolute; left: -9999px; top: 8px; }
.skip:focus { left: 8px; z-index: 10; padding: 6px 12px; background: var(--card); border: 1px solid var(--line); border-radius: 6px; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 20px; padding: 10px 20px; background: var(--card); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--fg); }
.top nav { display: flex; gap: 16px; flex: 1; }
.top nav a[aria-current] { color: var(--fg); font-weight: 600; }
.top form { margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 20px; }
h1 { font-size: 22px; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 17px; margin: 28px 0 10px; }
.sub { color: var(--muted); margin: 0 0 16px; overflow-wrap: anywhere; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 16px; }
.scroll { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); font-weight: 600; }
tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { white-space: normal; overflow-wrap: anywhere; min-width: 200px; }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 6px 18px; margin: 0; }
dl.fields dt { color: var(--muted); }
dl.fields dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 560px) { dl.fields { grid-template-columns: 1fr; } dl.fields dd { margin-bottom: 6px; } main { padding: 12px; } }
pre.json, pre.error { margin: 0; padding: 12px; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; overflow: auto; max-height: 480px; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.error { max-height: 160px; color: var(--bad); white-space: pre-wrap; max-width: 520px; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; font-weight: 600; border: 1px solid currentColor; }
.s-ready, .s-completed, .s-done, .r-ship { color: var(--good); }
.s-failed, .r-hold { color: var(--bad); }
.s-recording, .s-pending { color: var(--warn); }
.s-archived, .s-skipped { color: var(--muted); }
.better { color: var(--good); font-weight: 600; }
.worse { color: var(--bad); font-weight: 600; }
.same, .na, .muted { color: var(--muted); }
.filters { display: flex; flex-wrap: wrap; gap: 10px; align-items: end; margin-bottom: 14px; }
.filters > a { line-height: 34px; }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
input, select, button { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: var(--fg); }
button { cursor: pointer; background: var(--accent); border-color: var(--accent); color: #fff; }
button.link { background: none; border: 0; color: var(--accent); padding: 0; }
@media (prefers-color-scheme: dark) { button:not(.link) { color: #14171c; } }
.pager { display: flex; gap: 16px; margin-top: 12px; }
.notice { padding: 12px 16px; border-radius: 8px; border: 1px solid var(--warn); color: var(--warn); background: var(--card); }
.error-box { padding: 10px 14px; border-radius: 6px; border: 1px solid var(--bad); color: var(--bad); margin-bottom: 12px; }
.recommend { display: flex; flex-wrap: wrap; gap: 8px 20px; align-items: baseline; margin: 14px 0; }
.recommend strong { font-size: 20px; letter-spacing: .04em; }
.login { max-width: 440px; margin: 8vh auto; }
.login input { width: 100%; margin: 6px 0 12px; }
.artifacts { display: flex; flex-wrap: wrap; gap: 10px 20px; margin: 0 0 12px; padding: 0; list-style: none; }
video { display: block; width: 100%; max-width: 720px; max-height: 60vh; background: #000; border-radius: 6px; }
.chart-figure { margin: 0; }
.chart-figure figcaption { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 4px 16px; color: var(--muted); font-size: 13px; margin-bottom: 4px; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-left: 8px; background: var(--cand); }
.swatch.baseline { background: var(--base); border-radius: 50%; }
.chart { width: 100%; height: auto; display: block; }
.chart text { fill: var(--muted); font: 11px system-ui, sans-serif; }
td.metric { white-space: normal; min-width: 120px; }
td.metric small { display: block; }
@media (max-width: 560px) {
  .chart text { font-size: 24px; }
  /* Tables of class "stack" turn into one block per row: the head cell on top, then label: value pairs. */
  table.stack, table.stack tbody { display: block; }
  table.stack thead { display: none; }
  table.stack tr { display: grid; grid-template-columns: 1fr 1fr; gap: 2px 12px; padding: 8px 12px; border-bottom: 1px solid var(--line); }
  table.stack tr:last-child { border-bottom: 0; }
  table.stack td { display: block; border: 0; padding: 0; text-align: left; white-space: normal; overflow-wrap: anywhere; min-width: 0; }
  table.stack td.head { grid-column: 1 / -1; font-weight: 600; }
  table.stack td.full { grid-column: 1 / -1; }
  table.stack td.rownum { display: none; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: 12px; }
  pre.error { max-width: none; }
}
.chart .axis { stroke: var(--line); }
.chart .grid { stroke: var(--line); stroke-dasharray: 2 3; }
.chart .diag { stroke: var(--muted); stroke-dasharray: 4 4; }
.chart .baseline { fill: var(--base); }
.chart .candidate { fill: var(--cand); }
.chart .up { stroke: var(--good); }
.chart .down { stroke: var(--bad); stroke-dasharray: 4 2; }
.chart .flat { stroke: var(--muted); }
.chart .candidate.hollow { fill: none; stroke: var(--cand); }
.chart .failed-mark { stroke: var(--bad); fill: none; }
.swatch.up { height: 3px; width: 14px; vertical-align: middle; background: var(--good); }
.swatch.down { height: 0; width: 14px; vertical-align: middle; background: none; border-top: 3px dashed var(--bad); }
.failed-glyph { margin-left: 8px; color: var(--bad); font-weight: 700; }
.chart-table, .plot-summary { margin-top: 6px; font-size: 13px; }
.chart-table summary, .plot-summary summary { cursor: pointer; color: var(--accent); }
.plot-summary { overflow-x: auto; }
.plot-summary table { width: auto; }
.r-inconclusive { color: var(--warn); }
svg.errorbar { vertical-align: middle; margin-right: 6px; }
.errorbar .zero { stroke: var(--muted); stroke-dasharray: 2 2; }
.errorbar .bar { stroke: var(--muted); stroke-width: 2; }
.errorbar .point { fill: var(--muted); }
.errorbar.better .bar { stroke: var(--good); } .errorbar.better .point { fill: var(--good); }
.errorbar.worse .bar { stroke: var(--bad); } .errorbar.worse .point { fill: var(--bad); }
td.interval { white-space: nowrap; }
.interval-text { font-size: 12px; color: var(--muted); font-variant-numeric: tabular-nums; }
td.candidate-cell small { display: block; font-size: 11px; }
.self-reported { color: var(--warn); }
ol.reasons { flex-basis: 100%; margin: 4px 0 0; padding-left: 20px; }
.open-loop { flex-basis: 100%; margin: 0; font-size: 13px; }
#action-keys { margin-top: 12px; }
.chart-nav { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 13px; margin-bottom: 6px; }
.chart-nav [aria-current] { font-weight: 700; color: var(--fg); }
.plots { margin: 0 0 18px; }
.plots h3 { font-size: 15px; margin: 14px 0 6px; }
.plots[data-state=missing] .plot-status, .plots[data-state=error] .plot-status { color: var(--warn); }
.plot { margin: 0 0 14px; padding: 8px; background: var(--card); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.plot figcaption { font-size: 13px; color: var(--muted); margin-bottom: 4px; overflow-wrap: anywhere; }
.plot .u-legend { font-size: 12px; text-align: left; }
.plot .u-legend .u-series { padding: 0 6px; }
.plot .u-legend th { text-transform: none; letter-spacing: normal; color: var(--fg); padding: 0 2px; }
.trend { margin: 0 0 18px; }
.trend h2 { margin-top: 0; }
.trend .point a:focus circle, .trend .point a:hover circle { stroke: var(--fg); stroke-width: 2; }
.trend .point a:focus { outline: none; }
.trend .point .value { display: none; fill: var(--fg); font-weight: 600; }
.trend .point a:focus .value, .trend .point a:hover .value { display: inline; }
/* Better and worse by shape as well as colour: a worse point is hollow, its ring dashed. */
.trend-chart circle.down { fill: var(--card); stroke-width: 2.5; }
.trend-chart circle.up { stroke-width: 2.5; }
.glyph-better { color: var(--good); }
.glyph-worse { color: var(--bad); }
p.legend { font-size: 13px; margin: -4px 0 8px; }
.chart .ci { stroke: var(--cand); stroke-width: 1.5; }
.chart .zero { stroke: var(--muted); stroke-dasharray: 4 4; }
.chart .trendline { stroke: var(--cand); fill: none; stroke-width: 1.5; }
td.head { white-space: normal; overflow-wrap: anywhere; min-width: 12ch; max-width: 40ch; }
td[data-label=robot], td[data-label=policy], td[data-label=candidate], td[data-label=baseline] { white-space: normal; overflow-wrap: anywhere; max-width: 28ch; }
`
