// A projected write for people: where the path lies, what the write does, and
// the unified diff with additions and removals marked by more than colour
// (the +/- stays in the text, and each line says what it is to a screen reader).
import type { ProjectedWrite } from '../../audit/approval-record.js';
import { html, type SafeHtml } from '../html.js';

const WHERE: Readonly<Record<ProjectedWrite['where'], string>> = {
  writable_root: 'inside a root the tool may write',
  read_only_root: 'inside a read-only root: the write will be refused',
  outside_roots: 'outside the workspace roots: the write will be refused',
  no_path: 'no path',
};

/** One projected write: path, place, summary and diff. */
export function writeView(write: ProjectedWrite): SafeHtml {
  const warn = write.where === 'writable_root' ? '' : ' warn';
  return html`<section class="write" aria-label="Writes ${write.path ?? write.argument}">
<p><span class="label">Writes</span> <code>${write.path ?? `(argument ${write.argument})`}</code> <span class="where${warn}">${WHERE[write.where]}</span></p>
<p>${write.summary}</p>
${write.diff === null ? '' : diffView(write.diff)}
</section>`;
}

/** A unified diff, one line per row, kind-marked. */
export function diffView(diff: string): SafeHtml {
  const lines = diff.split('\n').map((line) => {
    const kind = lineKind(line);
    return html`<span class="d-${kind}">${line}</span>\n`;
  });
  return html`<pre class="diff" aria-label="Unified diff">${lines}</pre>`;
}

function lineKind(line: string): 'meta' | 'hunk' | 'add' | 'del' | 'ctx' {
  if (line.startsWith('+++ ') || line.startsWith('--- ') || line.startsWith('\\') || line.startsWith('… ')) return 'meta';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return 'ctx';
}
