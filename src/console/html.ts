// Server-side HTML with escaping by default: every value interpolated into an
// `html` template is text (HTML-escaped, and its invisible characters shown
// as escapes, as the approval prompt shows them) unless it is itself the
// output of `html`. So a tool's result, an argument or a principal named
// `"><img onerror=…>` can only ever be text on a page; nothing the console
// renders is assembled by string concatenation outside this tag.
import { escapeInvisible } from '../config/escape-text.js';

/** Markup built by `html` (or a trusted constant): inserted as it is. */
export class SafeHtml {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** A template whose interpolations are escaped; arrays are joined, null, undefined and false render nothing. */
export function html(strings: TemplateStringsArray, ...values: readonly unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let index = 0; index < values.length; index++) out += render(values[index]) + (strings[index + 1] ?? '');
  return new SafeHtml(out);
}

/** Text for HTML content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

/** Text shown as it is written, line breaks kept (inside <pre>): each line escaped on its own. */
export function multiline(text: string): SafeHtml {
  return new SafeHtml(
    text
      .split('\n')
      .map((line) => escapeHtml(escapeInvisible(line)))
      .join('\n'),
  );
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.markup;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(escapeInvisible(String(value)));
}
