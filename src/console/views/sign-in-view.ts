// Signing in: the same credentials `serve --http` accepts (a token of the
// token file, or a JWT of the identity provider), posted once; the browser
// then holds only the session cookie.
import { html } from '../html.js';
import { notice, page, type PageContext } from './layout.js';

export function signInPage(ctx: PageContext, kind: 'tokens' | 'jwt', refusal?: string): string {
  const label = kind === 'jwt' ? 'Bearer token (a JWT from your identity provider)' : 'Bearer token (from the token file of this host)';
  const body = html`${refusal === undefined ? '' : notice('alert', refusal)}
<form class="sign-in" method="post" action="${ctx.base}/sign-in">
<p><label for="token">${label}</label>
<input id="token" name="token" type="password" required autocomplete="off" spellcheck="false"></p>
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">The token is checked as an MCP request's would be; the browser keeps only a session cookie (HttpOnly, SameSite=Strict) for 8 hours at most.</p>`;
  return page(ctx, 'none', 'Sign in', body);
}
