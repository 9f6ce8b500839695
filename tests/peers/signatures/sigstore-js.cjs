#!/usr/bin/env node
// sigstore-js (@sigstore/sign, @sigstore/verify) beside toolcell, for python/test_signatures.py:
// signs an image the way cosign 3 does (a DSSE envelope around an in-toto statement naming the
// manifest's digest, with cosign's signing predicate), and verifies such bundles.
//   node sigstore-js.cjs sign-key KEY.pem STATEMENT.json OUT.bundle.json
//   node sigstore-js.cjs sign-keyless INSTANCE_URL TOKEN_FILE STATEMENT.json OUT.bundle.json
//   node sigstore-js.cjs verify-key PUB.pem BUNDLE.json MANIFEST_DIGEST
//   node sigstore-js.cjs verify-keyless TRUSTED_ROOT.json BUNDLE.json MANIFEST_DIGEST IDENTITY ISSUER
// Exits 0 and prints one line when it did what was asked; 1 with the reason otherwise.
const fs = require('fs');
const crypto = require('crypto');
const { DSSEBundleBuilder, FulcioSigner, RekorWitness } = require('@sigstore/sign');
const { bundleToJSON, bundleFromJSON } = require('@sigstore/bundle');
const { TrustedRoot } = require('@sigstore/protobuf-specs');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

const IN_TOTO = 'application/vnd.in-toto+json';
const COSIGN_SIGN = 'https://sigstore.dev/cosign/sign/v1';
const EMPTY_ROOT = { mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
  tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [] };

async function sign(signer, witnesses, statementPath, out) {
  const bundle = await new DSSEBundleBuilder({ signer, witnesses })
    .create({ data: fs.readFileSync(statementPath), type: IN_TOTO });
  fs.writeFileSync(out, JSON.stringify(bundleToJSON(bundle)));
}

// sigstore-js checks the envelope's signature; that the statement is a signature of this
// manifest is the caller's to check, as cosign does.
function checkStatement(bundle, digest) {
  const statement = JSON.parse(bundle.content.dsseEnvelope.payload.toString());
  if (!statement.subject.some((s) => `sha256:${s.digest.sha256}` === digest)) throw new Error(`not about ${digest}`);
  if (statement.predicateType !== COSIGN_SIGN) throw new Error(`predicate ${statement.predicateType}`);
}

const commands = {
  'sign-key': async (keyPath, statement, out) => {
    const key = crypto.createPrivateKey(fs.readFileSync(keyPath));
    const pub = crypto.createPublicKey(key);
    const hint = crypto.createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('base64');
    const signer = { sign: async (data) => ({ signature: crypto.sign('sha256', data, key),
      key: { $case: 'publicKey', publicKey: pub.export({ type: 'spki', format: 'pem' }), hint } }) };
    await sign(signer, [], statement, out);
    return `signed with the key ${hint}`;
  },
  'sign-keyless': async (url, tokenFile, statement, out) => {
    const token = fs.readFileSync(tokenFile, 'utf8').trim();
    const signer = new FulcioSigner({ fulcioBaseURL: url, identityProvider: { getToken: async () => token } });
    await sign(signer, [new RekorWitness({ rekorBaseURL: url })], statement, out);
    return 'signed keyless (a Fulcio certificate, a Rekor entry)';
  },
  'verify-key': async (pubPath, bundlePath, digest) => {
    const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundlePath)));
    const publicKey = crypto.createPublicKey(fs.readFileSync(pubPath));
    const trust = toTrustMaterial(TrustedRoot.fromJSON(EMPTY_ROOT), () => ({ publicKey, validFor: () => true }));
    new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(toSignedEntity(bundle));
    checkStatement(bundle, digest);
    return `verified: a signature of ${digest} by the key`;
  },
  'verify-keyless': async (rootPath, bundlePath, digest, identity, issuer) => {
    const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundlePath)));
    const trust = toTrustMaterial(TrustedRoot.fromJSON(JSON.parse(fs.readFileSync(rootPath))));
    const policy = { subjectAlternativeName: identity, extensions: { issuer } };
    new Verifier(trust, { tlogThreshold: 1, ctlogThreshold: 1, timestampThreshold: 0 }).verify(toSignedEntity(bundle), policy);
    checkStatement(bundle, digest);
    return `verified: a signature of ${digest} by ${identity}`;
  },
};

const [command, ...args] = process.argv.slice(2);
if (!commands[command]) {
  console.error(`usage: sigstore-js.cjs ${Object.keys(commands).join('|')} ...`);
  process.exit(2);
}
commands[command](...args).then((done) => console.log(done), (e) => { console.error(e.message || e); process.exit(1); });
