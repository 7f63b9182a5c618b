// The live feed's script, served from the package at /assets/feed.js (the CSP
// allows scripts from the console only). Written small by hand: it listens to
// the page's event stream and puts each call in the table, newest first,
// filling cells with textContent only, so nothing a tool or a principal wrote
// is ever parsed as markup. Without JavaScript the page still shows the calls.
export const FEED_SCRIPT = `'use strict';
(function () {
  var body = document.getElementById('feed-rows');
  var status = document.getElementById('feed-status');
  if (!body || typeof window.EventSource !== 'function') return;
  var MAX_ROWS = 200;
  var rows = new Map();
  function idOf(tr) {
    var link = tr.querySelector('a');
    return link ? decodeURIComponent(String(link.getAttribute('href')).split('/').pop()) : '';
  }
  Array.prototype.forEach.call(body.querySelectorAll('tr'), function (tr) { rows.set(idOf(tr), tr); });
  function say(text) { if (status) status.textContent = text; }
  function upsert(call) {
    if (!call || typeof call.id !== 'string' || !Array.isArray(call.cells)) return;
    var tr = rows.get(call.id);
    var fresh = !tr;
    if (fresh) tr = document.createElement('tr');
    while (tr.firstChild) tr.removeChild(tr.firstChild);
    call.cells.forEach(function (text, index) {
      var td = document.createElement('td');
      if (index === 0) {
        var a = document.createElement('a');
        a.setAttribute('href', String(call.href));
        a.textContent = String(text);
        td.appendChild(a);
      } else {
        td.textContent = String(text);
      }
      tr.appendChild(td);
    });
    if (fresh) {
      body.insertBefore(tr, body.firstChild);
      rows.set(call.id, tr);
      while (body.rows.length > MAX_ROWS) {
        var last = body.rows[body.rows.length - 1];
        rows.delete(idOf(last));
        body.removeChild(last);
      }
    }
  }
  var source = new EventSource(body.getAttribute('data-events'));
  source.addEventListener('open', function () { say('Live: new calls appear here as they are journaled.'); });
  source.addEventListener('error', function () { say('The live feed was interrupted; reconnecting…'); });
  source.addEventListener('call', function (event) {
    try { upsert(JSON.parse(event.data)); } catch (error) { /* a malformed event is skipped */ }
  });
})();
`;
