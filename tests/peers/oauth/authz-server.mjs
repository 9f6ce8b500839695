#!/usr/bin/env node
// Test-only OAuth 2.1 / OIDC authorization server for the OAuth peer tests of `toolcell serve`
// (python/test_oauth.py copies it beside the npm packages and starts it).
// Built on oidc-provider (pinned in package.json). NOT for production: in-memory adapter,
// auto-login/auto-consent, unauthenticated /_control endpoints. Listens on 127.0.0.1 only.
//
// Usage:
//   node authz-server.mjs [--port N|0] [--resource URL] [--scopes "tools:echo tools:fetch"]
//                         [--verbose] [--ttl SECONDS] [--token-ttl SECONDS] [--short-ttl SECONDS] [--alg RS256|ES256]
//   env fallbacks: AUTHZ_PORT, AUTHZ_RESOURCE, AUTHZ_SCOPES, AUTHZ_TTL
//
// Prints exactly ONE line to stdout when ready (JSON, starts with {"ready":true ...}).
// Everything else (oidc-provider notices, logs) goes to stderr.
// Exits by itself after --ttl seconds (default 300), on SIGTERM/SIGINT, or POST /_control/shutdown.

import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

// oidc-provider's attention.info() uses console.info (stdout); keep stdout for the ready line only.
console.info = (...a) => console.error(...a);
console.log = (...a) => console.error(...a);

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    resource: { type: 'string' },
    scopes: { type: 'string' },
    ttl: { type: 'string' },
    'token-ttl': { type: 'string' },
    'short-ttl': { type: 'string' },
    alg: { type: 'string' },
    'rotation-keys': { type: 'string' },
    verbose: { type: 'boolean' },
  },
  allowPositionals: true,
});

const PORT = Number(args.port ?? process.env.AUTHZ_PORT ?? 0);
const LIFETIME = Number(args.ttl ?? process.env.AUTHZ_TTL ?? 300); // seconds until self-exit
const TOKEN_TTL = Number(args['token-ttl'] ?? 600);
const SHORT_TTL = Number(args['short-ttl'] ?? 5);
const ALG = args.alg ?? 'RS256';
const ROTATION_KEYS = Number(args['rotation-keys'] ?? 3); // how many rotations are possible
const RESOURCE_SCOPES = (args.scopes ?? process.env.AUTHZ_SCOPES ?? 'tools:echo tools:fetch').split(/\s+/).filter(Boolean);
let DEFAULT_RESOURCE = args.resource ?? process.env.AUTHZ_RESOURCE; // used when a client sends no `resource`

// ---------------------------------------------------------------------------------------------
// Signing keys. All keys are in the provider keystore from the start (it cannot be changed after
// construction); which ones are *published* at /jwks and which one *signs* is our own state.
function genKey(kid) {
  const { privateKey } = ALG.startsWith('ES')
    ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: ALG, use: 'sig' };
}
const stamp = Date.now().toString(36);
const rotationKeys = Array.from({ length: ROTATION_KEYS + 1 }, (_, i) => genKey(`k${i + 1}-${stamp}`));
const rogueKey = genKey(`rogue-${stamp}`); // never published: tokens signed with it must be rejected
const allKeys = [...rotationKeys, rogueKey];
const publicJwk = (k) => {
  const { d, p, q, dp, dq, qi, ...pub } = k; // strip private members
  return pub;
};

const keyState = {
  currentIndex: 0,
  published: [rotationKeys[0].kid],
  get currentKid() { return rotationKeys[this.currentIndex].kid; },
  rotate() {
    if (this.currentIndex + 1 >= rotationKeys.length) throw new Error('no rotation keys left (raise --rotation-keys)');
    this.currentIndex += 1;
    this.published = [this.currentKid, ...this.published]; // new first, old still published
  },
  retire() { this.published = [this.currentKid]; }, // drop all old keys from the JWKS
  view() {
    return {
      current_kid: this.currentKid, published_kids: this.published, rogue_kid: rogueKey.kid, alg: ALG,
    };
  },
};

// ---------------------------------------------------------------------------------------------
// Pre-registered clients.
const CC = { grant_types: ['client_credentials'], redirect_uris: [], response_types: [] };
const clients = [
  { client_id: 'toolcell-test', client_secret: 'toolcell-test-secret', ...CC }, // client_secret_basic (default)
  { client_id: 'toolcell-test-post', client_secret: 'toolcell-test-secret', token_endpoint_auth_method: 'client_secret_post', ...CC },
  { client_id: 'toolcell-expired', client_secret: 'toolcell-test-secret', ...CC }, // iat/exp back-dated: already expired
  { client_id: 'toolcell-short', client_secret: 'toolcell-test-secret', ...CC }, // token TTL = --short-ttl seconds
  { client_id: 'toolcell-rogue', client_secret: 'toolcell-test-secret', ...CC }, // signed by an unpublished key
  {
    // public client for authorization_code + PKCE (login/consent are automatic)
    client_id: 'toolcell-public',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    application_type: 'native', // native => any loopback port allowed for http redirect URIs (RFC 8252)
    redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
  },
];

// ---------------------------------------------------------------------------------------------
function isResourceUrl(r) {
  try {
    const u = new URL(r);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.hash;
  } catch { return false; }
}

function startProvider(issuer) {
  const configuration = {
    clients,
    jwks: { keys: allKeys },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES],
    claims: { openid: ['sub'] },
    clientDefaults: { grant_types: ['authorization_code'], id_token_signed_response_alg: ALG, response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' },
    responseTypes: ['code'], // OAuth 2.1: no implicit / hybrid
    pkce: { required: () => true }, // OAuth 2.1: PKCE always for authorization_code
    features: {
      devInteractions: { enabled: false }, // replaced by the auto-consent middleware below
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: true }, // open DCR (RFC 7591), as MCP clients expect
      resourceIndicators: {
        enabled: true,
        defaultResource: async (ctx, client, oneOf) => (oneOf || DEFAULT_RESOURCE),
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resource, client) => {
          if (!isResourceUrl(resource)) throw new Provider.errors.InvalidTarget();
          return {
            scope: RESOURCE_SCOPES.join(' '),
            audience: resource, // RFC 8707: aud = the resource indicator
            accessTokenFormat: 'jwt', // RFC 9068 JWT access token (typ at+jwt)
            jwt: { sign: { alg: ALG, kid: client?.clientId === 'toolcell-rogue' ? rogueKey.kid : keyState.currentKid } },
          };
        },
      },
    },
    ttl: {
      AccessToken: (ctx, token, client) => (client?.clientId === 'toolcell-short' ? SHORT_TTL : TOKEN_TTL),
      ClientCredentials: (ctx, token, client) => (client?.clientId === 'toolcell-short' ? SHORT_TTL : TOKEN_TTL),
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 24 * 3600,
      Grant: 24 * 3600,
      Interaction: 600,
      Session: 24 * 3600,
    },
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    formats: {
      customizers: {
        jwt: async (ctx, token, jwt) => {
          if (token.clientId === 'toolcell-expired') {
            const now = Math.floor(Date.now() / 1000);
            jwt.payload.iat = now - 7200;
            jwt.payload.exp = now - 3600; // well past any reasonable clock leeway
          }
        },
      },
    },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    renderError: async (ctx, out) => { ctx.type = 'json'; ctx.body = out; },
  };

  const provider = new Provider(issuer, configuration);
  provider.proxy = false;

  if (args.verbose || process.env.AUTHZ_LOG) {
    provider.use(async (ctx, next) => {
      await next();
      console.error(`authz: ${ctx.method} ${ctx.originalUrl} -> ${ctx.status}${ctx.status >= 300 && ctx.status < 400 ? ` Location: ${ctx.response.get('location')}` : ''}`);
    });
  }

  // Our pre-middleware: JWKS publishing, /_control, auto login+consent.
  provider.use(async (ctx, next) => {
    const { path, method } = ctx;
    if (path === '/jwks' && method === 'GET') {
      ctx.type = 'application/jwk-set+json; charset=utf-8';
      ctx.set('cache-control', 'no-store');
      ctx.body = { keys: allKeys.filter((k) => keyState.published.includes(k.kid)).map(publicJwk) };
      return;
    }
    if (path.startsWith('/_control/')) return control(ctx, provider);
    const m = /^\/interaction\/([^/]+)$/.exec(path);
    if (m && method === 'GET') {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      const { prompt, params } = details;
      let result;
      if (prompt.name === 'login') {
        result = { login: { accountId: params.login_hint || 'test-user' } };
      } else if (prompt.name === 'consent') {
        const grant = details.grantId
          ? await provider.Grant.find(details.grantId)
          : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
        const d = prompt.details;
        if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
        if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
        if (d.missingResourceScopes) {
          for (const [indicator, scope] of Object.entries(d.missingResourceScopes)) {
            grant.addResourceScope(indicator, scope.join(' '));
          }
        }
        const grantId = await grant.save();
        result = { consent: details.grantId ? {} : { grantId } };
      } else {
        result = { error: 'access_denied', error_description: `unhandled prompt ${prompt.name}` };
      }
      const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
      ctx.status = 303;
      ctx.redirect(returnTo);
      return;
    }
    await next();
  });

  return provider;
}

// ---------------------------------------------------------------------------------------------
// Control endpoints (test-only). All return JSON.
//   GET  /_control/state                 -> key state
//   POST /_control/rotate                -> sign with a NEW kid; JWKS publishes new + old
//   POST /_control/retire                -> JWKS publishes only the current kid (old tokens now unverifiable)
//   GET  /_control/forge?kind=none|hs256&resource=URL&scope=S&client_id=C
//                                        -> a forged token with valid-looking claims (alg none, or
//                                           HS256 keyed with the current public key PEM: alg confusion)
//   POST /_control/shutdown              -> exit(0)
function b64u(x) { return Buffer.from(typeof x === 'string' ? x : JSON.stringify(x)).toString('base64url'); }

async function control(ctx, provider) {
  const op = ctx.path.slice('/_control/'.length);
  ctx.type = 'json';
  ctx.set('cache-control', 'no-store');
  try {
    if (op === 'state' && ctx.method === 'GET') {
      ctx.body = keyState.view();
    } else if (op === 'rotate' && ctx.method === 'POST') {
      keyState.rotate();
      ctx.body = keyState.view();
    } else if (op === 'retire' && ctx.method === 'POST') {
      keyState.retire();
      ctx.body = keyState.view();
    } else if (op === 'forge' && ctx.method === 'GET') {
      const q = ctx.query;
      const now = Math.floor(Date.now() / 1000);
      const clientId = q.client_id || 'toolcell-test';
      const payload = {
        jti: crypto.randomBytes(16).toString('base64url'),
        sub: clientId,
        iat: now,
        exp: now + 600,
        scope: q.scope ?? RESOURCE_SCOPES.join(' '),
        client_id: clientId,
        iss: provider.issuer,
        aud: q.resource || DEFAULT_RESOURCE,
      };
      const kind = q.kind || 'none';
      let token;
      if (kind === 'none') {
        token = `${b64u({ alg: 'none', typ: 'at+jwt' })}.${b64u(payload)}.`;
      } else if (kind === 'hs256') {
        const cur = allKeys.find((k) => k.kid === keyState.currentKid);
        const pem = crypto.createPublicKey({ key: publicJwk(cur), format: 'jwk' }).export({ type: 'spki', format: 'pem' });
        const input = `${b64u({ alg: 'HS256', typ: 'at+jwt', kid: cur.kid })}.${b64u(payload)}`;
        token = `${input}.${crypto.createHmac('sha256', pem).update(input).digest('base64url')}`;
      } else {
        throw new Error(`unknown kind ${kind}`);
      }
      ctx.body = { access_token: token, token_type: 'Bearer', kind };
    } else if (op === 'shutdown' && ctx.method === 'POST') {
      ctx.body = { bye: true };
      setImmediate(() => shutdown(0));
    } else {
      ctx.status = 404;
      ctx.body = { error: 'not_found' };
    }
  } catch (e) {
    ctx.status = 400;
    ctx.body = { error: 'control_error', error_description: e.message };
  }
}

// ---------------------------------------------------------------------------------------------
let server;
function shutdown(code) {
  if (server) server.close();
  setTimeout(() => process.exit(code), 50).unref();
  process.exitCode = code;
}

let handler = (req, res) => { res.statusCode = 503; res.end(); };
server = http.createServer((req, res) => handler(req, res));
server.listen(PORT, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = startProvider(issuer);
  handler = provider.callback();
  process.stdout.write(`${JSON.stringify({
    ready: true,
    issuer,
    port,
    jwks_uri: `${issuer}/jwks`,
    token_endpoint: `${issuer}/token`,
    default_resource: DEFAULT_RESOURCE ?? null,
    scopes: RESOURCE_SCOPES,
    ...keyState.view(),
    ttl: LIFETIME,
  })}\n`);
});

setTimeout(() => { console.error(`authz-server: lifetime ${LIFETIME}s reached, exiting`); shutdown(0); }, LIFETIME * 1000).unref();
// keep the process alive until the lifetime timer fires even though it is unref'd: the server holds it open.
process.on('SIGTERM', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));
process.on('SIGHUP', () => { try { keyState.rotate(); console.error('rotated to', keyState.currentKid); } catch (e) { console.error(e.message); } });
