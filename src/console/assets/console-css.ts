// The console's one stylesheet, served from the package (the CSP allows styles
// from the console only; nothing inline). Plain CSS, no build step: system
// fonts, readable contrast (at least 4.5:1), visible focus, and marks that do
// not rely on colour alone.
export const CONSOLE_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #4f5863; --line: #d0d7de; --bg: #ffffff; --panel: #f6f8fa;
  --accent: #0a4ea8; --ok: #116329; --bad: #a40e26; --warn: #7a4d00; }
* { box-sizing: border-box; }
html { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color: var(--fg); background: var(--bg); }
body { margin: 0; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, main:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #ffbf47; color: #000; padding: .4em .8em; }
.skip:focus { left: .5em; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5em 1.5em; padding: .6em 1.2em; border-bottom: 1px solid var(--line); background: var(--panel); }
.brand { margin: 0; font-weight: 700; }
.brand a { color: var(--fg); text-decoration: none; }
nav ul { display: flex; gap: 1em; list-style: none; margin: 0; padding: 0; }
nav a { text-decoration: none; padding: .2em .1em; }
nav a[aria-current="page"] { font-weight: 700; border-bottom: 3px solid var(--accent); }
form.who { margin-left: auto; display: flex; align-items: center; gap: .6em; }
main { padding: 1em 1.2em 3em; max-width: 1200px; }
h1 { font-size: 1.5em; margin: .3em 0 .6em; }
h2 { font-size: 1.15em; margin: 1.4em 0 .5em; }
table { border-collapse: collapse; width: 100%; margin: .5em 0 1em; }
caption { text-align: left; font-weight: 600; padding: .3em 0; }
th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: break-word; }
th { background: var(--panel); white-space: nowrap; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
.hash { overflow-wrap: anywhere; }
.muted { color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3em 1.2em; margin: 0 0 1em; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
dl.tree { margin: .2em 0 .2em .2em; padding-left: .8em; border-left: 2px solid var(--line); }
dl.tree dt { font-weight: 600; font-family: ui-monospace, monospace; }
dl.tree dd { margin: 0 0 .4em .8em; }
ol.tree { margin: .2em 0; padding-left: 2.2em; }
.v-string { color: #0b5d1e; overflow-wrap: anywhere; }
pre.v-string, pre.result { white-space: pre-wrap; margin: .2em 0; padding: .4em .6em; background: var(--panel); border: 1px solid var(--line); }
.v-number, .v-boolean, .v-null { color: #6b2fa3; font-family: ui-monospace, monospace; }
pre.diff { background: var(--panel); border: 1px solid var(--line); padding: .5em .7em; overflow-x: auto; white-space: pre; }
.d-add { color: var(--ok); background: #e6ffec; display: inline-block; min-width: 100%; }
.d-del { color: var(--bad); background: #ffebe9; display: inline-block; min-width: 100%; }
.d-hunk { color: var(--accent); }
.d-meta { color: var(--muted); font-weight: 600; }
section.write { border: 1px solid var(--line); border-radius: 4px; padding: .2em .9em .6em; margin: .6em 0; }
.label { font-weight: 600; }
.where { color: var(--muted); }
.where.warn { color: var(--warn); font-weight: 600; }
.state { font-weight: 600; }
.s-pending { color: var(--warn); }
.s-approved, .s-spent { color: var(--ok); }
.s-denied { color: var(--bad); }
.notice { padding: .6em .8em; border-left: 4px solid var(--accent); background: var(--panel); }
.notice.alert { border-left-color: var(--bad); }
form.decide, form.sign-in, form.search { max-width: 42em; }
form.search { display: grid; grid-template-columns: repeat(auto-fill, minmax(18em, 1fr)); gap: 0 1.2em; max-width: none; }
form.search p { margin: .3em 0; }
form.search label { display: block; font-weight: 600; }
form.search .muted { display: block; font-size: .88em; }
form.search input, form.search select { width: 100%; }
form.decide label, form.sign-in label { display: block; font-weight: 600; margin-bottom: .2em; }
input, select, textarea { font: inherit; padding: .35em .5em; border: 1px solid #8c959f; border-radius: 4px; max-width: 100%; }
form.decide input, form.decide textarea, form.sign-in input { width: 100%; }
button { font: inherit; padding: .4em 1em; border-radius: 4px; border: 1px solid #8c959f; background: #fff; cursor: pointer; }
button.approve { background: var(--ok); color: #fff; border-color: var(--ok); }
button.deny { background: var(--bad); color: #fff; border-color: var(--bad); }
.buttons { display: flex; gap: .8em; }
`;
