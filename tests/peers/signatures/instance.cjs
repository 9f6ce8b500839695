#!/usr/bin/env node
// A private Sigstore instance on 127.0.0.1 for the signature peer tests (python/test_signatures.py
// copies it beside the npm packages and starts it): @sigstore/mock's Fulcio (with its CT log),
// Rekor v1 and timestamp authority behind one HTTP server. Writes, into OUTDIR:
//   trusted_root.json  what verifiers trust (toolcell's `trusted_root`, sigstore-js, sigstore-python)
//   trust_config.json  sigstore-python's client trust config (the root and where to sign)
//   token.jwt          an OIDC-shaped identity token for signer@toolcell.test from
//                      https://issuer.toolcell.test (the mock Fulcio does not check its signature)
// Prints one JSON line when ready ({"ready":true,"url":...}); stops itself after TTL seconds.
// usage: node instance.cjs OUTDIR [TTL_SECONDS]
//
// Where @sigstore/mock's Rekor is not Rekor, the server makes it so, as real Rekor does: a `dsse`
// entry is stored as hashes and signatures, not as the proposed envelope (sigstore-verify and
// sigstore-python read the stored form), and a hashedrekord key as 64-column PEM.
const http = require('http');
const fs = require('fs');
const crypto = require('crypto');
const mock = require('@sigstore/mock');

const out = process.argv[2] || '.';
const ttl = Number(process.argv[3] || 600);
let base;
const ISSUER = 'https://issuer.toolcell.test';
const SUBJECT = 'signer@toolcell.test';
const kp = () => crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const b64 = (b) => Buffer.from(b).toString('base64');
const spki = (k) => k.export({ type: 'spki', format: 'der' });

// Real Rekor stores a `dsse` entry as the envelope's and payload's hashes and its signatures,
// each with its verifier; the mock would store the proposal as it came.
function asRekorStoresDsse(entry) {
  const proposed = entry.spec && entry.spec.proposedContent;
  if (entry.kind !== 'dsse' || !proposed) return entry;
  const envelope = JSON.parse(proposed.envelope);
  const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
  entry.spec = {
    envelopeHash: { algorithm: 'sha256', value: sha256(proposed.envelope) },
    payloadHash: { algorithm: 'sha256', value: sha256(Buffer.from(envelope.payload, 'base64')) },
    signatures: envelope.signatures.map((s, i) => ({ signature: s.sig, verifier: proposed.verifiers[i] })),
  };
  return entry;
}

// Real Rekor canonicalizes a hashedrekord's public key to 64-column PEM; sigstore-python compares
// the stored entry with its own PEM byte for byte.
function asRekorStoresHashedRekord(entry) {
  const key = entry.spec && entry.spec.signature && entry.spec.signature.publicKey;
  if (!key || !key.content) return entry;
  const pem = Buffer.from(key.content, 'base64').toString();
  const m = pem.match(/-----BEGIN ([A-Z ]+)-----([\s\S]*?)-----END/);
  if (m) {
    const b = m[2].replace(/\s+/g, '');
    key.content = Buffer.from(`-----BEGIN ${m[1]}-----\n${b.match(/.{1,64}/g).join('\n')}\n-----END ${m[1]}-----\n`).toString('base64');
  }
  return entry;
}

(async () => {
  let handlers = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const h = handlers.find((x) => req.method === 'POST' && req.url.split('?')[0] === x.path);
      if (!h) { res.writeHead(404); return res.end('not found'); }
      let body = Buffer.concat(chunks).toString();
      if (h.path === '/api/v2/signingCert') {
        // sigstore-python's request, in the mock's shape: the token only in the Authorization
        // header, the CSR as base64(PEM)
        const j = JSON.parse(body);
        const auth = (req.headers.authorization || '').replace(/^Bearer /, '');
        if (!j.credentials && auth) j.credentials = { oidcIdentityToken: auth };
        if (j.certificateSigningRequest && !j.certificateSigningRequest.startsWith('-----'))
          j.certificateSigningRequest = Buffer.from(j.certificateSigningRequest, 'base64').toString();
        body = JSON.stringify(j);
      }
      if (h.path === '/api/v1/log/entries') {
        body = JSON.stringify(asRekorStoresHashedRekord(asRekorStoresDsse(JSON.parse(body))));
      }
      const r = await h.fn(body);
      res.writeHead(r.statusCode, { 'Content-Type': r.contentType || 'text/plain' });
      res.end(typeof r.response === 'string' ? r.response : Buffer.from(r.response.buffer, r.response.byteOffset, r.response.byteLength));
      console.error(`${req.method} ${req.url} -> ${r.statusCode}`);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  setTimeout(() => process.exit(0), ttl * 1000).unref();
  process.on('SIGTERM', () => process.exit(0));

  const ctKeys = kp(), caKeys = kp(), tlogKeys = kp(), tsaKeys = kp();
  const ctlog = await mock.initializeCTLog(ctKeys);
  const ca = await mock.initializeCA(caKeys, ctlog);
  const tlog = await mock.initializeTLog(base, tlogKeys);
  const tsa = await mock.initializeTSA(tsaKeys);
  handlers = [mock.fulcioHandler(ca), mock.rekorHandler(tlog), mock.tsaHandler(tsa)];

  const start = new Date(Date.now() - 60_000).toISOString();
  const trustedRoot = {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [{ baseUrl: base, hashAlgorithm: 'SHA2_256',
      publicKey: { rawBytes: b64(spki(tlogKeys.publicKey)), keyDetails: 'PKIX_ECDSA_P256_SHA_256', validFor: { start } },
      logId: { keyId: b64(crypto.createHash('sha256').update(spki(tlogKeys.publicKey)).digest()) } }],
    certificateAuthorities: [{ subject: { organization: 'toolcell.test', commonName: 'mock fulcio' }, uri: base,
      certChain: { certificates: [{ rawBytes: b64(ca.rootCertificate) }] }, validFor: { start } }],
    ctlogs: [{ baseUrl: base, hashAlgorithm: 'SHA2_256',
      publicKey: { rawBytes: b64(ctlog.publicKey), keyDetails: 'PKIX_ECDSA_P256_SHA_256', validFor: { start } },
      logId: { keyId: b64(ctlog.logID) } }],
    timestampAuthorities: [{ subject: { organization: 'toolcell.test', commonName: 'mock tsa' }, uri: base,
      certChain: { certificates: [{ rawBytes: b64(tsa.intCertificate) }, { rawBytes: b64(tsa.rootCertificate) }] },
      validFor: { start } }],
  };
  const svc = (url, v) => ({ url, majorApiVersion: v, validFor: { start }, operator: 'toolcell.test' });
  const signingConfig = {
    mediaType: 'application/vnd.dev.sigstore.signingconfig.v0.2+json',
    caUrls: [svc(base, 1)], oidcUrls: [svc(base, 1)], rekorTlogUrls: [svc(base, 1)], tsaUrls: [],
    rekorTlogConfig: { selector: 'ANY' }, tsaConfig: { selector: 'ANY' },
  };
  fs.writeFileSync(`${out}/trusted_root.json`, JSON.stringify(trustedRoot, null, 2));
  fs.writeFileSync(`${out}/trust_config.json`, JSON.stringify({
    mediaType: 'application/vnd.dev.sigstore.clienttrustconfig.v0.1+json', trustedRoot, signingConfig }, null, 2));
  const now = Math.floor(Date.now() / 1000);
  const jwt = [{ alg: 'none', typ: 'JWT' }, { iss: ISSUER, sub: SUBJECT, email: SUBJECT, email_verified: true, aud: 'sigstore', iat: now, nbf: now, exp: now + 3600 }]
    .map((o) => Buffer.from(JSON.stringify(o)).toString('base64url')).join('.') + '.';
  fs.writeFileSync(`${out}/token.jwt`, jwt);

  console.log(JSON.stringify({ ready: true, url: base, identity: SUBJECT, issuer: ISSUER }));
})().catch((e) => { console.error(e); process.exit(1); });
