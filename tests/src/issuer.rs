//! The public side of an OAuth authorization server, for tests of `serve`'s resource server:
//! its metadata (RFC 8414) and its JWKS on 127.0.0.1, ES256 keys made here, access tokens
//! signed with them, keys rotated and retired on demand, and a count of JWKS fetches. (The peer
//! tests use a real one, `oidc-provider`; this one lets Rust tests sign any token at all.)

use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A running issuer; it stops when dropped.
#[derive(Debug)]
pub struct Issuer {
    /// `http://127.0.0.1:PORT`: the issuer identifier tokens carry as `iss`.
    pub url: String,
    state: Arc<Mutex<Keys>>,
    server: JoinHandle<()>,
}

#[derive(Debug)]
struct Keys {
    /// Published keys, the one that signs last.
    published: Vec<Key>,
    fetches: usize,
}

#[derive(Debug)]
struct Key {
    kid: String,
    pair: EcdsaKeyPair,
}

impl Key {
    fn new(kid: String) -> Self {
        let random = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).expect("a key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random).expect("a key");
        Self { kid, pair }
    }

    fn jwk(&self) -> Value {
        let point = self.pair.public_key().as_ref();
        json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": self.kid,
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        })
    }

    fn sign(&self, header: &Value, claims: &Value) -> String {
        let signed =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature = self.pair.sign(&SystemRandom::new(), signed.as_bytes()).expect("signed");
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }
}

impl Issuer {
    /// Starts serving `/.well-known/oauth-authorization-server` and `/jwks`, with one key.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let state = Arc::new(Mutex::new(Keys { published: vec![Key::new("key-1".into())], fetches: 0 }));
        let metadata = json!({
            "issuer": url,
            "jwks_uri": format!("{url}/jwks"),
            "token_endpoint": format!("{url}/token"),
            "response_types_supported": ["code"],
        });
        let router = Router::new()
            .route("/.well-known/oauth-authorization-server", get(move || async move { axum::Json(metadata) }))
            .route("/jwks", get(jwks))
            .with_state(state.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Self { url, state, server }
    }

    /// A token signed with the current key, with these claims.
    pub fn token(&self, claims: &Value) -> String {
        let keys = self.keys();
        let key = keys.published.last().expect("a key");
        key.sign(&json!({"alg": "ES256", "typ": "at+jwt", "kid": key.kid}), claims)
    }

    /// A token with this header (any `alg`, any `kid`), signed with the current key.
    pub fn token_with_header(&self, header: &Value, claims: &Value) -> String {
        self.keys().published.last().expect("a key").sign(header, claims)
    }

    /// A token with no signature at all (`alg: none`, as a forger writes it).
    pub fn unsigned(header: &Value, claims: &Value) -> String {
        format!("{}.{}.", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()))
    }

    /// A new key signs from now on; the old ones stay published.
    pub fn rotate(&self) {
        let mut keys = self.keys();
        let kid = format!("key-{}", keys.published.len() + 1);
        keys.published.push(Key::new(kid));
    }

    /// Only the current key stays published.
    pub fn retire_old_keys(&self) {
        let mut keys = self.keys();
        let current = keys.published.pop().expect("a key");
        keys.published = vec![current];
    }

    /// How many times the JWKS was fetched.
    pub fn fetches(&self) -> usize {
        self.keys().fetches
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn jwks(State(state): State<Arc<Mutex<Keys>>>) -> axum::Json<Value> {
    let mut keys = state.lock().unwrap_or_else(PoisonError::into_inner);
    keys.fetches += 1;
    axum::Json(json!({ "keys": keys.published.iter().map(Key::jwk).collect::<Vec<_>>() }))
}
