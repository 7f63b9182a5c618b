// Signed-in operators of the console. A browser cannot send a bearer token by
// itself, so signing in (with the same token file or JWT `serve --http`
// accepts) opens a session: a random id in an HttpOnly, SameSite=Strict
// cookie, and a random CSRF token that each form carries back. Sessions live
// in this process only, are bounded in number and lifetime, and end at a JWT's
// expiry.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { header } from './security.js';

/** The cookie that names a session. */
const SESSION_COOKIE = 'toolhost_console';
/** Longest a session lives, in ms. */
export const SESSION_LIFETIME_MS = 8 * 60 * 60 * 1000;
/** Sessions kept at once; the oldest goes first. */
export const MAX_SESSIONS = 1000;

export interface ConsoleSession {
  readonly id: string;
  readonly principal: string;
  readonly csrfToken: string;
  readonly expiresAt: number;
}

export class ConsoleSessions {
  readonly #sessions = new Map<string, ConsoleSession>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Opens a session for `principal`; `expiresAtMs` (a JWT's expiry) shortens it. */
  open(principal: string, expiresAtMs?: number): ConsoleSession {
    const now = this.#now();
    for (const [id, session] of this.#sessions) if (session.expiresAt <= now) this.#sessions.delete(id);
    while (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    const session: ConsoleSession = {
      id: randomBytes(32).toString('base64url'),
      principal,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: Math.min(now + SESSION_LIFETIME_MS, expiresAtMs ?? Infinity),
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The live session the request's cookie names, if any. */
  find(req: IncomingMessage): ConsoleSession | undefined {
    const id = cookieValue(header(req, 'cookie'), SESSION_COOKIE);
    if (id === undefined) return undefined;
    const session = this.#sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return session;
  }

  close(id: string): void {
    this.#sessions.delete(id);
  }
}

/** The Set-Cookie value of a session (or of its end, with `maxAgeS` 0). */
export function sessionCookie(value: string, maxAgeS: number, path: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=${path}; Max-Age=${Math.max(0, Math.floor(maxAgeS))}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

function cookieValue(cookies: string | undefined, name: string): string | undefined {
  if (cookies === undefined) return undefined;
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
