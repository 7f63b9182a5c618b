// `serve --http` with OAuth 2.1 bearer JWTs (SPEC section 6.1): the issuer's
// JWKS in a file, tokens signed by a real key pair (jose). A good token lets
// SDK clients in; an expired one, one signed by another key, `alg: none`, an
// HMAC, a wrong audience or issuer, and one without `exp` are each 401 with an
// `invalid_token` challenge pointing at the RFC 9728 metadata.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttpClient, ensureBuilt } from '../helpers/mcp-clients.js';
import { makeHostDirs, type HostDirs } from '../helpers/host-session.js';
import { get, post, startHttpHost, type HttpHost } from '../helpers/http-host.js';

const ISSUER = 'https://idp.example.test';
const AUDIENCE = 'https://tools.example.test/mcp';

let dirs: HostDirs;
let host: HttpHost;
let issuerKey: CryptoKey;
let strangerKey: CryptoKey;

beforeAll(async () => {
  await ensureBuilt();
  dirs = makeHostDirs();
  const issuer = await generateKeyPair('ES256', { extractable: true });
  const stranger = await generateKeyPair('ES256', { extractable: true });
  issuerKey = issuer.privateKey;
  strangerKey = stranger.privateKey;
  const jwksFile = join(dirs.root, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(issuer.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] }));
  host = await startHttpHost(dirs, ['--auth-issuer', ISSUER, '--auth-audience', AUDIENCE, '--auth-jwks', jwksFile]);
});

afterAll(async () => {
  await host?.stop();
  dirs?.cleanup();
});

function sign(claims: JWTPayload, options: { key?: CryptoKey; expiresIn?: string | number | null } = {}): Promise<string> {
  const jwt = new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuedAt();
  if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? '5m');
  return jwt.sign(options.key ?? issuerKey);
}

const GOOD = { iss: ISSUER, aud: AUDIENCE, sub: 'jwt-user' };

describe('a valid JWT', () => {
  it.each(['v1-legacy', 'v2-modern'] as const)('%s client lists and calls tools', async (kind) => {
    const client = await connectHttpClient(host.url, await sign(GOOD), { kind });
    try {
      expect((await client.listTools()).tools.map((tool) => tool['name'])).toContain('echo');
      expect((await client.callTool({ name: 'echo', arguments: { text: 'jwt' } }))['isError']).not.toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('refused JWTs: 401 before any MCP handling', () => {
  const cases: Array<[string, () => Promise<string>]> = [
    ['expired', () => sign(GOOD, { expiresIn: Math.floor(Date.now() / 1000) - 3600 })],
    ['signed by another key', () => sign(GOOD, { key: strangerKey })],
    ['alg none', async () => unsigned({ ...GOOD, exp: Math.floor(Date.now() / 1000) + 300 })],
    ['HS256 with the public key as secret', async () => hmacSigned({ ...GOOD, exp: Math.floor(Date.now() / 1000) + 300 })],
    ['wrong audience', () => sign({ ...GOOD, aud: 'https://other.example.test/mcp' })],
    ['wrong issuer', () => sign({ ...GOOD, iss: 'https://evil.example.test' })],
    ['no expiry', () => sign(GOOD, { expiresIn: null })],
    ['not a JWT', async () => 'abc.def.ghi'],
  ];

  it.each(cases)('%s', async (_name, token) => {
    const response = await post(host.url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', { authorization: `Bearer ${await token()}` });
    expect(response.status).toBe(401);
    const challenge = String(response.headers['www-authenticate']);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`resource_metadata="${host.base}/.well-known/oauth-protected-resource/mcp"`);
    expect(JSON.parse(response.body).error.data.code).toBe('unauthorized');
  });

  it('a missing token gets the challenge without an error code', async () => {
    const response = await post(host.url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {});
    expect(response.status).toBe(401);
    expect(String(response.headers['www-authenticate'])).not.toContain('error=');
  });
});

describe('RFC 9728 protected-resource metadata', () => {
  it.each(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'])('%s names the resource and the issuer', async (path) => {
    const response = await get(`${host.base}${path}`);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      resource: host.url,
      authorization_servers: [ISSUER],
      bearer_methods_supported: ['header'],
      resource_name: 'toolhost',
    });
  });
});

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function unsigned(payload: JWTPayload): string {
  return `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(payload)}.`;
}

// The algorithm-confusion attack: HS256 keyed with the issuer's public key material.
async function hmacSigned(payload: JWTPayload): Promise<string> {
  const { createHmac } = await import('node:crypto');
  const input = `${base64url({ alg: 'HS256', typ: 'JWT', kid: 'k1' })}.${base64url(payload)}`;
  const secret = JSON.stringify(await exportJWK(issuerKey));
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

describe('a JWKS fetched by URL, behind a reverse proxy name', () => {
  it('verifies against the remote key set and answers for --public-url', async () => {
    const jwksDirs = makeHostDirs();
    let fetched = 0;
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'remote-1', alg: 'ES256', use: 'sig' }] });
    const idp: Server = createServer((req, res) => {
      fetched++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(jwks);
    });
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    const jwksUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/jwks`;
    const publicUrl = 'https://tools.example.test/mcp';
    const proxied = await startHttpHost(jwksDirs, ['--auth-issuer', ISSUER, '--auth-audience', AUDIENCE, '--auth-jwks', jwksUrl, '--public-url', publicUrl]);
    try {
      const token = await new SignJWT({ ...GOOD }).setProtectedHeader({ alg: 'ES256', kid: 'remote-1' }).setIssuedAt().setExpirationTime('5m').sign(privateKey);
      const ok = await post(
        proxied.url,
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
        {
          authorization: `Bearer ${token}`,
          host: 'tools.example.test',
        },
      );
      expect(ok.status).toBe(200);
      expect(fetched).toBeGreaterThan(0);
      const refused = await post(proxied.url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', { authorization: `Bearer ${await sign(GOOD)}` });
      expect(refused.status).toBe(401);
      expect(String(refused.headers['www-authenticate'])).toContain('resource_metadata="https://tools.example.test/.well-known/oauth-protected-resource/mcp"');
      const metadata = await get(`${proxied.base}/.well-known/oauth-protected-resource`);
      expect(JSON.parse(metadata.body)).toMatchObject({ resource: publicUrl, authorization_servers: [ISSUER] });
    } finally {
      await proxied.stop();
      idp.close();
      jwksDirs.cleanup();
    }
  });
});
