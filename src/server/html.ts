import { createHash } from 'node:crypto';

/**
 * What the exporter's pages for people share: escaping, the one inline style sheet, the
 * Content-Security-Policy that allows that style sheet and nothing else, and how figures,
 * durations and times are written. Every text that comes from an upstream or a
 * configuration goes through `escapeHtml` (text and attribute values alike); the pages carry
 * no script, load nothing and may not be framed.
 */

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Escaped, and cut to `max` characters with a note saying so: upstream text can be megabytes. */
export function clippedText(value: string, max: number): string {
  if (value.length <= max) return escapeHtml(value);
  return `${escapeHtml(value.slice(0, max))}… <span class="muted">(${value.length - max} more characters in /status?format=json)</span>`;
}

/** Light, readable on a phone: below 760 px a table's rows turn into cards, two figures a line. */
const STYLE = `
*{box-sizing:border-box}
html{color-scheme:light;-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#1f2328;background:#fff}
header{background:#24292f;color:#f6f8fa;padding:12px 16px}
header a{color:#9ecbff}
header h1{margin:0 0 4px;font-size:20px;font-weight:600}
main{max-width:1400px;margin:0 auto;padding:8px 16px 32px}
h2{font-size:18px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid #d0d7de}
h3{font-size:15px;margin:18px 0 6px}
p{margin:6px 0}
a{color:#0969da}
.facts{display:flex;flex-wrap:wrap;gap:2px 22px;margin:6px 0;padding:0;list-style:none}
.facts li{max-width:100%;overflow-wrap:anywhere}
.label{color:#59636e;font-weight:600}
header .label{color:#b7bdc8}
.muted{color:#59636e}
header .muted{color:#b7bdc8}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:13px;font-weight:600;line-height:20px;color:#fff;white-space:nowrap;vertical-align:1px}
.ok{background:#1a7f37}.bad{background:#cf222e}.warn{background:#9a6700}.idle{background:#6e7781}
nav ul{list-style:none;margin:8px 0;padding:0;display:flex;flex-wrap:wrap;gap:6px 18px}
table{border-collapse:collapse;width:100%;font-size:14px;margin:4px 0 8px}
th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid #d8dee4}
th{background:#f6f8fa;font-weight:600;white-space:nowrap}
td{overflow-wrap:anywhere}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.short{white-space:nowrap}
td.name{min-width:12em}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:8px 10px;margin:6px 0;white-space:pre-wrap;overflow-wrap:anywhere}
.problem,.note{border-left:4px solid #cf222e;background:#ffebe9;padding:6px 12px;margin:10px 0;overflow-wrap:anywhere}
.note{border-left-color:#9a6700;background:#fff8c5}
details{margin:8px 0}
summary{cursor:pointer;color:#0969da}
ul.plain{margin:4px 0;padding-left:20px}
ul.plain li{overflow-wrap:anywhere}
footer{color:#59636e;font-size:13px;border-top:1px solid #d0d7de;margin-top:28px;padding-top:8px}
@media (max-width:760px){
table,tbody{display:block;width:100%}
thead{display:none}
tr{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:0 12px;border:1px solid #d0d7de;border-radius:6px;margin:0 0 8px;padding:4px 8px}
td{display:block;border:0;padding:2px 0;min-width:0}
td::before{content:attr(data-label) ": ";color:#59636e;font-weight:600}
td.name,td.wide{grid-column:1/-1}
td.name{font-weight:600}
td.name::before{content:none}
td.none{display:none}
td.num{text-align:left;white-space:normal}
}
`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * For every HTML page: nothing may load or run; the one style sheet is allowed by its hash
 * (an injected `<style>` or `style=` would not apply); no framing, no form, no base URL.
 */
export const CONTENT_SECURITY_POLICY = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** Headers every HTML page is sent with. */
export const HTML_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** A whole page: `title` is plain text, `header` and `body` are HTML built with the escapes above. */
export function htmlPage(title: string, header: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
${header}
</header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** `4,577`: grouped the same whatever the server's locale. */
export function count(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `45 s`, `3 min 10 s`, `2 h 5 min`, `3 d 4 h`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 || s >= 600 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h${s % 3600 >= 60 ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  return `${Math.floor(s / 86_400)} d${s % 86_400 >= 3600 ? ` ${Math.floor((s % 86_400) / 3600)} h` : ''}`;
}

/** `2026-11-22 12:00:05 UTC`. */
export function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `2026-11-22 12:00:05 UTC (3 min ago)`, escaped. */
export function when(ms: number, nowMs: number): string {
  const ago = (nowMs - ms) / 1000;
  const relative = ago >= 0 ? `${duration(ago)} ago` : `in ${duration(-ago)}`;
  return `${escapeHtml(utc(ms))} <span class="muted">(${relative})</span>`;
}

export type Tone = 'ok' | 'bad' | 'warn' | 'idle';

export function badge(tone: Tone, text: string): string {
  return `<span class="badge ${tone}">${escapeHtml(text)}</span>`;
}

/** What a cell shows when there is nothing to say; hidden on a phone. */
export const NOTHING = '<span class="muted">–</span>';

/**
 * A table whose cells are HTML already; `labels` head the columns and, on a phone, each cell.
 * `columns` gives a column its class: `num` (figures, right-aligned), `name` (the row's name,
 * the card's title on a phone), `short` (never wrapped), `wide` (the whole card's width on a phone).
 */
export function table(labels: readonly string[], rows: readonly (readonly string[])[], columns: readonly (string | undefined)[] = []): string {
  const head = labels.map((l, i) => `<th${columns[i] === undefined ? '' : ` class="${columns[i]}"`}>${escapeHtml(l)}</th>`).join('');
  const cell = (html: string, i: number) => {
    const classes = [columns[i], html === '' || html === NOTHING ? 'none' : undefined].filter((c) => c !== undefined).join(' ');
    return `<td data-label="${escapeHtml(labels[i] ?? '')}"${classes === '' ? '' : ` class="${classes}"`}>${html}</td>`;
  };
  const body = rows.map((row) => `<tr>${row.map(cell).join('')}</tr>`).join('\n');
  return `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

/**
 * A link for an address an upstream named, shown after `label`: only http(s) becomes a link
 * (the label with it), anything else (`javascript:`) stays text.
 */
export function externalLink(url: string, label = '', max = 300): string {
  const text = `${escapeHtml(label)}${clippedText(url, max)}`;
  return /^https?:\/\//i.test(url) ? `<a href="${escapeHtml(url)}" rel="noreferrer noopener">${text}</a>` : text;
}
