// Escaping by default (SPEC section 7.4: the console renders everything a tool
// or a principal controls as text): hostile strings in content and attribute
// positions come out as text, invisible characters as visible escapes.
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, multiline, SafeHtml } from '../../../src/console/html.js';
import { valueTree } from '../../../src/console/views/value-tree.js';
import { diffView } from '../../../src/console/views/diff-view.js';

const HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "' onmouseover='alert(1)", '</textarea><script>x</script>', '&lt;already&gt;'];

describe('html', () => {
  it.each(HOSTILE)('%s is text in content and in a quoted attribute', (value) => {
    const markup = html`<p title="${value}">${value}</p>`.markup;
    expect(markup).not.toMatch(/<script|<img|<\/textarea/i);
    expect(markup).not.toMatch(/title="[^"]*"[^>]*onmouseover/);
    expect(markup).toBe(`<p title="${escapeHtml(value)}">${escapeHtml(value)}</p>`);
  });

  it('only html output is inserted as markup; arrays join; null, undefined and false render nothing', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}${[html`<br>`, '<br>']}${null}${undefined}${false}${0}</p>`.markup).toBe('<p><b>&lt;i&gt;</b><br>&lt;br&gt;0</p>');
    expect(inner).toBeInstanceOf(SafeHtml);
  });

  it('shows invisible characters as escapes: a bidi override or a forged newline cannot hide', () => {
    expect(html`<td>${'invoice\u202etxt.exe\nAPPROVED'}</td>`.markup).toBe('<td>invoice\\u202etxt.exe\\nAPPROVED</td>');
    expect(multiline('a\u200bb\nc<d>').markup).toBe('a\\u200bb\nc&lt;d&gt;');
  });

  it('the arguments tree and the diff escape every leaf', () => {
    const tree = valueTree({ '<k>': ['<script>x</script>', { n: 1, b: true, z: null }], text: 'line\n<img onerror=1>' }).markup;
    expect(tree).not.toMatch(/<script|<img|<k>/);
    expect(tree).toContain('<dt>&lt;k&gt;</dt>');
    expect(tree).toContain('<pre class="v-string">line\n&lt;img onerror=1&gt;</pre>');
    const diff = diffView('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-<b>old</b>\n+<script>new</script>').markup;
    expect(diff).not.toMatch(/<script|<b>/);
    expect(diff).toContain('<span class="d-add">+&lt;script&gt;new&lt;/script&gt;</span>');
    expect(diff).toContain('<span class="d-del">-&lt;b&gt;old&lt;/b&gt;</span>');
  });
});
