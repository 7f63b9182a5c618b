// Arguments as a readable tree: objects as description lists, arrays as
// numbered lists, strings quoted (a multi-line string keeps its lines, each
// escaped), numbers, booleans and null as themselves. Every leaf goes through
// `html`, so it is text whatever it holds.
import { html, multiline, type SafeHtml } from '../html.js';

/** Nesting rendered; the journal already bounds arguments deeper than this. */
const MAX_TREE_DEPTH = 12;

/** The tree of a JSON value. */
export function valueTree(value: unknown, depth = 0): SafeHtml {
  if (depth > MAX_TREE_DEPTH) return html`<span class="muted">…</span>`;
  if (value === null) return html`<span class="v-null">null</span>`;
  if (typeof value === 'string') {
    return value.includes('\n') ? html`<pre class="v-string">${multiline(value)}</pre>` : html`<span class="v-string">"${value}"</span>`;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return html`<span class="v-${typeof value}">${String(value)}</span>`;
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="muted">[ ] (empty list)</span>`;
    return html`<ol class="tree" start="0">${value.map((item) => html`<li>${valueTree(item, depth + 1)}</li>`)}</ol>`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return html`<span class="muted">{ } (no members)</span>`;
    return html`<dl class="tree">${entries.map(([key, member]) => html`<dt>${key}</dt><dd>${valueTree(member, depth + 1)}</dd>`)}</dl>`;
  }
  return html`<span class="muted">${String(value)}</span>`;
}
