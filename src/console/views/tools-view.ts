// The tools page (as `toolhost list`): each tool with its class, sandbox, pin
// and the policy's decision; and one tool as `toolhost explain` shows it.
import type { ConsoleTool, ConsoleToolDetail } from '../console-data.js';
import { html } from '../html.js';
import { notice, page, type PageContext } from './layout.js';

export function toolsPage(ctx: PageContext, tools: readonly ConsoleTool[], problems: readonly string[]): string {
  const rows = tools.map(
    (tool) => html`<tr>
<td><a href="${ctx.base}/tools/${encodeURIComponent(tool.name)}">${tool.name}</a></td>
<td>${tool.sideEffect ?? 'unclassified'}</td>
<td>${tool.sandbox}</td>
<td>${tool.trust === 'first_party' ? 'first party' : 'community'}</td>
<td>${tool.listed ? 'yes' : 'no'}</td>
<td>${decisionText(tool)}</td>
<td>${tool.rule === null ? '—' : html`<code>${tool.rule}</code>`}</td>
<td>${tool.pin === null ? html`<span class="muted">not pinned</span>` : html`<code class="hash">${tool.pin.slice(0, 16)}…</code>`}</td>
</tr>`,
  );
  const body = html`${problems.map((problem) => notice('alert', problem))}
${
  tools.length === 0
    ? notice('status', 'No tools are known to this console.')
    : html`<table>
<caption>Every tool, in name order</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Class</th><th scope="col">Sandbox</th><th scope="col">Trust</th><th scope="col">Listed</th><th scope="col">Decision</th><th scope="col">Rule</th><th scope="col">Pin</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
}`;
  return page(ctx, 'tools', 'Tools', body);
}

export function toolPage(ctx: PageContext, tool: ConsoleToolDetail): string {
  const facts = html`<dl class="facts">
<dt>Description</dt><dd>${tool.description}</dd>
<dt>Manifest</dt><dd><code>${tool.file}</code></dd>
<dt>Class</dt><dd>${tool.sideEffect ?? 'unclassified'}</dd>
<dt>Sandbox</dt><dd>${tool.sandbox}; trust ${tool.trust === 'first_party' ? 'first party' : 'community'}; allowed modes: ${tool.allowedModes.join(', ') || 'none'}</dd>
<dt>Listed</dt><dd>${tool.listed ? 'yes' : 'no'}</dd>
<dt>Decision</dt><dd>${decisionText(tool)}${tool.reason ? html`: ${tool.reason}` : ''}</dd>
<dt>Rule</dt><dd>${tool.rule === null ? '—' : html`<code>${tool.rule}</code>`}</dd>
<dt>Pin</dt><dd>${tool.pin === null ? html`<span class="muted">not pinned (no toolhost.lock entry)</span>` : html`<code class="hash">${tool.pin}</code>`}</dd>
<dt>Writes</dt><dd>${tool.writes.length === 0 ? html`<span class="muted">no declared paths</span>` : tool.writes.map((name, index) => html`${index > 0 ? ', ' : ''}<code>${name}</code>`)}</dd>
<dt>Limits</dt><dd>timeoutMs ${tool.limits.timeoutMs}, maxResultBytes ${tool.limits.maxResultBytes}, memoryMb ${tool.limits.memoryMb}</dd>
${tool.upstream === null ? '' : html`<dt>Server</dt><dd>${tool.upstream.server} (its tool <code>${tool.upstream.tool}</code>)</dd>`}
</dl>`;
  const checks = html`<table><caption>Checks the policy makes for this tool</caption>
<thead><tr><th scope="col">Outcome</th><th scope="col">Key</th><th scope="col">Why</th><th scope="col">Rule</th></tr></thead>
<tbody>${tool.checks.map((check) => html`<tr><td>${check.outcome}</td><td><code>${check.key}</code></td><td>${check.text}</td><td>${check.rule === null ? '—' : html`<code>${check.rule}</code>`}</td></tr>`)}</tbody></table>`;
  const keys = html`<table><caption>Policy keys in force</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col">Layer</th><th scope="col">Rule</th></tr></thead>
<tbody>${tool.keys.map((key) => html`<tr><td><code>${key.key}</code></td><td><code>${JSON.stringify(key.value)}</code></td><td>${key.layer}</td><td><code>${key.rule}</code></td></tr>`)}</tbody></table>`;
  return page(ctx, 'tools', tool.name, html`${facts}${checks}${keys}`);
}

function decisionText(tool: ConsoleTool): string {
  if (tool.decision === 'allow') return 'allow';
  if (tool.decision === 'ask') return 'ask for approval';
  return `deny (${tool.code ?? 'policy_denied'})`;
}
