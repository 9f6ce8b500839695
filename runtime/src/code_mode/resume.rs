//! Resume tokens: a program paused for approval, sealed for the client to hand back.
//!
//! A token carries what the run observed up to the pause and the call it paused at, so that
//! any runtime holding the same key can resume it by replay (no state stays on the server).
//! It is authenticated with a keyed BLAKE3 MAC (as the compile cache's entries are): a client
//! can read it (it holds the program's arguments and what its calls returned, never a
//! secret: secrets passed on are redacted) but cannot change it. It expires, and a process
//! accepts each token once.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::sandbox::journal::{Observed, PendingCall, to_hex};

/// How long a person has to decide.
pub const RESUME_TOKEN_TTL: Duration = Duration::from_secs(3600);
/// The most tokens one process remembers having resumed (each until it expires).
const MAX_REMEMBERED: usize = 100_000;
/// The longest token accepted, in bytes.
pub const MAX_RESUME_TOKEN_BYTES: usize = 8 << 20;

/// Why a resume token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// It is not a token this runtime's key sealed, or it was changed.
    #[error(
        "the resume token is not authentic: it was changed, or sealed by a server with another key (servers that \
         resume each other's programs need the same resume key)"
    )]
    NotAuthentic,
    /// It expired.
    #[error("the resume token expired: run the program again")]
    Expired,
    /// This process resumed it already: the approved call ran once.
    #[error("the resume token was used already: a program resumes once from each pause")]
    AlreadyUsed,
    /// The program tool is another component than the paused run's.
    #[error("the program tool changed since the program paused: run the program again")]
    ProgramChanged,
    /// The resumed run asked for something the paused one did not.
    #[error("the resumed program diverged from its paused run: {0}; run the program again")]
    Diverged(String),
}

/// A paused program.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Paused {
    /// The program tool's digest, as hex.
    pub(crate) digest: String,
    /// `execute`'s arguments.
    pub(crate) arguments: String,
    pub(crate) context: Map<String, Value>,
    pub(crate) observed: Observed,
    pub(crate) pending: PendingCall,
    /// Seconds since the Unix epoch.
    pub(crate) expires_at: u64,
    /// Makes every token unique, so each is accepted once.
    pub(crate) nonce: String,
}

impl Paused {
    pub(crate) fn new(
        digest: String,
        arguments: String,
        context: Map<String, Value>,
        observed: Observed,
        pending: PendingCall,
    ) -> Self {
        let mut nonce = [0u8; 16];
        let _ = getrandom::fill(&mut nonce);
        let expires_at = now_secs().saturating_add(RESUME_TOKEN_TTL.as_secs());
        Self { digest, arguments, context, observed, pending, expires_at, nonce: to_hex(&nonce) }
    }

    /// The token: the paused run as base64url JSON, a dot, and its MAC.
    pub(crate) fn seal(&self, key: &[u8; 32]) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).unwrap_or_default());
        let mac = blake3::keyed_hash(key, payload.as_bytes());
        format!("{payload}.{}", mac.to_hex())
    }

    /// The paused run a token holds, once authentic, unexpired and not used before.
    pub(crate) fn open(key: &[u8; 32], token: &str) -> Result<Self, ResumeError> {
        if token.len() > MAX_RESUME_TOKEN_BYTES {
            return Err(ResumeError::NotAuthentic);
        }
        let (payload, mac) = token.split_once('.').ok_or(ResumeError::NotAuthentic)?;
        let mac = blake3::Hash::from_hex(mac).map_err(|_| ResumeError::NotAuthentic)?;
        // `Hash` compares in constant time.
        if blake3::keyed_hash(key, payload.as_bytes()) != mac {
            return Err(ResumeError::NotAuthentic);
        }
        let bytes = URL_SAFE_NO_PAD.decode(payload).map_err(|_| ResumeError::NotAuthentic)?;
        let paused: Paused = serde_json::from_slice(&bytes).map_err(|_| ResumeError::NotAuthentic)?;
        if paused.expires_at <= now_secs() {
            return Err(ResumeError::Expired);
        }
        remember(mac, paused.expires_at)?;
        Ok(paused)
    }
}

/// The tokens this process resumed, by MAC, until they expire.
static RESUMED: LazyLock<Mutex<HashMap<[u8; 32], u64>>> = LazyLock::new(Mutex::default);

fn remember(mac: blake3::Hash, expires_at: u64) -> Result<(), ResumeError> {
    let mut resumed = RESUMED.lock().unwrap_or_else(PoisonError::into_inner);
    if resumed.len() >= MAX_REMEMBERED {
        let now = now_secs();
        resumed.retain(|_, expires_at| *expires_at > now);
    }
    if resumed.len() >= MAX_REMEMBERED {
        // Full of live tokens: refusing one is safer than forgetting one.
        return Err(ResumeError::AlreadyUsed);
    }
    match resumed.insert(*mac.as_bytes(), expires_at) {
        Some(_) => Err(ResumeError::AlreadyUsed),
        None => Ok(()),
    }
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}
