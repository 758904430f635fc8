package debugstats

import "html/template"

// gaugeWidth is the width in CSS pixels of the cardinality gauge.
const gaugeWidth = 80

// pageTemplate is parsed once, at package initialisation (no goroutine, no
// I/O); executing it is safe for concurrent use. html/template escapes
// every value for its context: text, attributes, URLs, and the RCDATA of
// the SVG <title> tooltips.
var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{{if .Refresh}}<meta http-equiv="refresh" content="{{.Refresh}}">
{{end}}<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{.Title}} · stats</title>
<style>` + pageCSS + `</style>
</head>
<body data-generated="{{.Stamp}}">
<header>
<h1>{{.Title}} <span class="sub">stats</span></h1>
<p class="meta">{{len .Views}} views · generated {{.Generated}} · {{if .Refresh}}refreshes every {{.Refresh}} s{{else}}does not refresh{{end}}</p>
</header>
{{if .Exporters}}<section id="exporters" class="card">
<h2>Exporters</h2>
<table>
<thead><tr><th>exporter</th><th>status</th><th>last success</th><th class="num">exports</th><th class="num">failures</th><th class="num">payloads</th><th class="num">bytes</th><th class="num">retries</th><th class="num">dropped</th><th class="num">queued</th><th>last error</th></tr></thead>
<tbody>
{{range .Exporters}}<tr class="exporter" data-status="{{.Status}}"><td class="name">{{.Name}}</td><td><span class="badge {{.Status}}">{{.Status}}</span></td><td{{if .LastSuccessAt}} title="{{.LastSuccessAt}}"{{end}}>{{.LastSuccess}}</td><td class="num">{{.Exports}}</td><td class="num">{{.Failures}}</td><td class="num">{{.Payloads}}</td><td class="num">{{.Bytes}}</td><td class="num">{{.Retries}}</td><td class="num">{{.Dropped}}</td><td class="num">{{.Queued}}</td><td class="error">{{if .LastError}}{{.LastError}}{{else}}<span class="none">none</span>{{end}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}<section id="summary" class="card">
<h2>Views</h2>
{{if .Views}}<table>
<thead><tr><th>view</th><th>aggregation</th><th>unit</th><th class="num">total</th><th>rows / limit</th><th class="num">overflowed</th><th>snapshot</th></tr></thead>
<tbody>
{{range .Views}}<tr data-view="{{.Name}}"><td><a href="#{{.ID}}">{{.Name}}</a></td><td>{{.Agg}}</td><td>{{.Unit}}</td><td class="num total">{{.Total}}</td><td>{{template "card" .Card}}</td><td class="num{{if .Card.Overflowed}} warn{{end}}">{{.Card.Overflowed}}</td><td class="links"><a href="{{.JSONURL}}">json</a> <a href="{{.MsgpackURL}}">msgpack</a></td></tr>
{{end}}</tbody>
</table>
{{else}}<p class="empty">No view is registered.</p>
{{end}}</section>
{{range .Views}}<section id="{{.ID}}" class="card view" data-view="{{.Name}}" data-agg="{{.Agg}}">
<div class="vhead"><h2>{{.Name}}</h2><span class="badge agg">{{.Agg}}</span>{{if .Unit}}<span class="unit">unit {{.Unit}}{{if .MeasureUnit}} (counts values in {{.MeasureUnit}}){{end}}</span>{{end}}<span class="links">snapshot <a href="{{.JSONURL}}">json</a> <a href="{{.MsgpackURL}}">msgpack</a></span></div>
{{if .Description}}<p class="desc">{{.Description}}</p>
{{end}}<p class="meta">tag keys {{range .Keys}}<code>{{.}}</code> {{else}}<span class="none">none</span> {{end}}· since {{.Since}} · rows {{template "card" .Card}}{{if .Card.Overflowed}} <span class="badge warn">{{.Card.Overflowed}} recordings overflowed</span>{{end}}</p>
{{if .Rows}}<table class="rows">
<thead><tr><th>tags</th>{{if .IsDist}}<th class="num">count</th><th class="num">mean</th><th class="num">min</th><th class="num">max</th><th class="num">p50</th><th class="num">p90</th><th class="num">p99</th><th>buckets <span class="legend p50">p50</span> <span class="legend p99">p99</span></th>{{else}}<th class="num">value</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr class="row{{if .Overflow}} overflow{{end}}"><td class="tags">{{range .Tags}}<span class="tag"><span class="k">{{.Key}}</span>=<span class="v">{{.Value}}</span></span>{{else}}<span class="none">no tags</span>{{end}}{{if .Overflow}} <span class="badge warn">over the limit</span>{{end}}</td>{{with .Dist}}<td class="num count">{{.Count}}</td><td class="num">{{.Mean}}</td><td class="num">{{.Min}}</td><td class="num">{{.Max}}</td><td class="num p50">{{.P50}}</td><td class="num p90">{{.P90}}</td><td class="num p99">{{.P99}}</td><td class="chart">{{template "chart" .Chart}}{{if .Exemplars}}<ul class="exemplars">{{range .Exemplars}}<li class="exemplar" title="recorded {{.At}}"><span class="bucket">{{.Bucket}}</span> <span class="value">{{.Value}}</span>{{if .Trace}} trace <code class="trace">{{.Trace}}</code> span <code class="span">{{.Span}}</code>{{end}}{{if .Attachments}} <span class="attachments">{{.Attachments}}</span>{{end}}</li>{{end}}</ul>{{end}}</td>{{else}}<td class="num value">{{.Value}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{if .Hidden}}<p class="more">{{.Hidden}} more rows are not shown: the <a href="{{.JSONURL}}">JSON snapshot</a> has them all.</p>
{{end}}{{else}}<p class="empty">No rows recorded yet.</p>
{{end}}</section>
{{end}}<footer>zerostat · values are cumulative since each view was registered · percentiles are estimated from the buckets</footer>
</body>
</html>
{{define "card"}}<span class="cardinality{{if .Full}} full{{end}}"><span class="n">{{.Len}}{{if .Limit}} / {{.Limit}}{{else}} (no limit){{end}}</span>{{if .Limit}} <svg class="gauge" width="80" height="8" viewBox="0 0 80 8" aria-hidden="true"><rect class="bg" width="80" height="8" rx="2"/><rect class="fg" width="{{.GaugeW}}" height="8" rx="2"/></svg>{{end}}</span>{{end}}
{{define "chart"}}<svg class="hist" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Caption}}"><line class="axis" x1="0" y1="{{.PlotH}}" x2="{{.W}}" y2="{{.PlotH}}"/>{{range .Bars}}<rect class="bar{{if .Zero}} zero{{end}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>{{end}}{{range .Marks}}<line class="mark {{.Class}}" x1="{{.X}}" y1="0" x2="{{.X}}" y2="{{$.PlotH}}"><title>{{.Title}}</title></line>{{end}}{{range .Ticks}}<text x="{{.X}}" y="{{$.H}}" dy="-3">{{.Text}}</text>{{end}}</svg>{{end}}`

const pageCSS = `
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--soft:#eaeef2;--bg:#f6f8fa;--link:#0969da;--bar:#4a86c8;--ok:#1a7f37;--warn:#9a4d00;--bad:#cf222e}
*{box-sizing:border-box}
body{margin:0;padding:20px 28px 28px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0}
h1 .sub{color:var(--muted);font-weight:400}
h2{font:600 15px/1.3 ui-monospace,"DejaVu Sans Mono",monospace;margin:0}
#summary h2,#exporters h2{font-family:inherit;margin-bottom:6px}
.meta{color:var(--muted);margin:4px 0 14px;font-size:13px}
.card .meta{margin:6px 0 8px}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 18px;margin:0 0 16px}
table{border-collapse:collapse;width:100%}
th{text-align:left;font-weight:600;color:var(--muted);font-size:11px;text-transform:uppercase;letter-spacing:.04em;border-bottom:1px solid var(--line);padding:6px 10px;white-space:nowrap}
td{padding:5px 10px;border-bottom:1px solid var(--soft);vertical-align:middle}
tbody tr:last-child td{border-bottom:0}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.num.warn{color:var(--warn);font-weight:600}
code,.tag{font:12px ui-monospace,"DejaVu Sans Mono",monospace}
code{background:var(--soft);border-radius:4px;padding:1px 5px}
.tag{display:inline-block;background:#eef3f9;border-radius:4px;padding:1px 6px;margin:1px 4px 1px 0}
.tag .k{color:var(--muted)}
.none{color:var(--muted);font-style:italic}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;background:#ddf4ff;color:#0550ae}
.badge.ok{background:#dafbe1;color:var(--ok)}
.badge.failing{background:#ffebe9;color:var(--bad)}
.badge.errors,.badge.warn{background:#fff1e5;color:var(--warn)}
.badge.idle{background:var(--soft);color:var(--muted)}
.vhead{display:flex;align-items:center;gap:10px;flex-wrap:wrap}
.unit{color:var(--muted);font-size:13px}
.links{font-size:13px;white-space:nowrap}
.vhead .links{margin-left:auto;color:var(--muted)}
.links a{margin-left:6px}
.desc{margin:6px 0 0}
.empty,.more{color:var(--muted);margin:8px 0 0}
a{color:var(--link);text-decoration:none}
a:hover{text-decoration:underline}
td.error{color:var(--bad);font-size:13px;max-width:420px}
tr.overflow td{background:#fff8f0}
td.chart{padding:4px 10px;width:1%}
ul.exemplars{list-style:none;margin:2px 0 0;padding:0;font-size:11px;white-space:nowrap}
ul.exemplars code{font-size:11px}
svg{display:inline-block;vertical-align:middle}
svg.hist .bar{fill:var(--bar)}
svg.hist .bar:hover{fill:#1f5fa3}
svg.hist .bar.zero{fill:var(--line)}
svg.hist .axis{stroke:#afb8c1;stroke-width:1}
svg.hist text{font:9px system-ui,"DejaVu Sans",sans-serif;fill:var(--muted);text-anchor:middle}
svg.hist .mark{stroke-width:1.5;stroke-dasharray:3 2}
.mark.p50{stroke:var(--ok)}
.mark.p99{stroke:var(--bad)}
.legend{font-weight:600;text-transform:none;letter-spacing:0;padding-left:14px;position:relative}
.legend:before{content:"";position:absolute;left:0;top:50%;width:10px;border-top:2px dashed}
.legend.p50{color:var(--ok)}
.legend.p99{color:var(--bad)}
svg.gauge{margin-left:4px}
svg.gauge .bg{fill:var(--soft)}
svg.gauge .fg{fill:var(--ok)}
.full svg.gauge .fg{fill:var(--bad)}
.full .n{color:var(--bad);font-weight:600}
footer{color:var(--muted);font-size:12px;margin-top:8px}
`
