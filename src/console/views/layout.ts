// The page shell every console page shares: one stylesheet from the console
// itself, a skip link, a labelled navigation with the current page marked,
// who is signed in, and sign-out as a form (a state change is never a link).
import { formatSpan } from '../../audit/approval-format.js';
import { html, type SafeHtml } from '../html.js';

type Section = 'approvals' | 'feed' | 'audit' | 'tools' | 'none';

export interface PageContext {
  /** The console's path prefix, e.g. `/console`. */
  readonly base: string;
  /** The signed-in principal; undefined on the sign-in page. */
  readonly principal?: string;
  readonly csrfToken?: string;
  /** Clock of the page (ages, expiries). */
  readonly now: number;
}

const SECTIONS: readonly { readonly id: Exclude<Section, 'none'>; readonly label: string; readonly path: string }[] = [
  { id: 'approvals', label: 'Approvals', path: '/approvals' },
  { id: 'feed', label: 'Live calls', path: '/feed' },
  { id: 'audit', label: 'Audit', path: '/audit' },
  { id: 'tools', label: 'Tools', path: '/tools' },
];

/** A whole page. `scripts` are paths under the console (its own files only: the CSP allows nothing else). */
export function page(ctx: PageContext, section: Section, title: string, body: SafeHtml, scripts: readonly string[] = []): string {
  const nav = SECTIONS.map((item) => html`<li><a href="${ctx.base}${item.path}"${item.id === section ? html` aria-current="page"` : ''}>${item.label}</a></li>`);
  const who =
    ctx.principal === undefined
      ? ''
      : html`<form class="who" method="post" action="${ctx.base}/sign-out"><span>Signed in as <strong>${ctx.principal}</strong></span>
<input type="hidden" name="csrf" value="${ctx.csrfToken ?? ''}"><button type="submit">Sign out</button></form>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · toolhost console</title>
<link rel="stylesheet" href="${ctx.base}/assets/console.css">
${scripts.map((src) => html`<script src="${ctx.base}${src}" defer></script>`)}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand"><a href="${ctx.base}/approvals">toolhost console</a></p>
${ctx.principal === undefined ? '' : html`<nav aria-label="Sections"><ul>${nav}</ul></nav>`}
${who}
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.markup;
}

/** `<time>` with the ISO instant, and how long ago or ahead of `now` it is. */
export function timeAt(ms: number | null, now: number): SafeHtml {
  if (ms === null) return html`<span class="muted">—</span>`;
  const iso = new Date(ms).toISOString();
  const span = formatSpan(now - ms);
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d{3}Z$/, 'Z')}</time> <span class="muted">(${ms <= now ? `${span} ago` : `in ${formatSpan(ms - now)}`})</span>`;
}

/** A message box: `status` for news, `alert` for a refusal. */
export function notice(kind: 'status' | 'alert', text: string | SafeHtml): SafeHtml {
  return html`<p class="notice ${kind}" role="${kind}">${text}</p>`;
}
