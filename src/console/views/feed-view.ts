// The live feed: the newest calls, server-rendered (readable without
// JavaScript, with a link to reload), and the console's own script that adds
// new calls as they are journaled, from the page's event stream.
import type { CallRecord } from '../../audit/call-record.js';
import { html } from '../html.js';
import { callsTable, type ApprovalsByCall } from './calls-view.js';
import { page, type PageContext } from './layout.js';

export function feedPage(ctx: PageContext, records: readonly CallRecord[], approvals: ApprovalsByCall): string {
  const body = html`<p id="feed-status" role="status" aria-live="polite">Showing the newest ${records.length} calls. <a href="${ctx.base}/feed">Reload</a> to see newer ones (with JavaScript on, they appear here by themselves).</p>
${callsTable(ctx.base, 'Calls, newest first', records, approvals, html`id="feed-rows" data-events="${ctx.base}/feed/events"`)}`;
  return page(ctx, 'feed', 'Live calls', body, ['/assets/feed.js']);
}
