//! `toolcell push`, `toolcell pull` and `toolcell keygen`: tools to and from OCI registries,
//! signed with a key and checked in process.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, bail};
use toolcell_oci::manifest::annotations;
use toolcell_oci::signature::{Identity, PublicKey, Signer, SigningKey, Trust, TrustRoot, Verified};
use toolcell_oci::{
    BlobStore, Component, Credentials, LOCK_FILE, Lockfile, OciReference, PullError, Pulled, Puller, RegistryClient,
    RegistrySettings,
};
use toolcell_runtime::Runtime;

use crate::args::{PullArgs, PushArgs, RegistryArgs, TrustArgs};
use crate::print::human_duration;

/// The store pulled blobs are kept in: `oci/` in the cache folder.
pub(crate) fn store_dir(cache_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let base = cache_dir.map(Path::to_owned).or_else(crate::load::default_cache_dir).context(
        "no folder to keep pulled tools in: set --cache-dir (or TOOLCELL_CACHE_DIR), or HOME or XDG_CACHE_HOME",
    )?;
    Ok(base.join("oci"))
}

fn client(args: &RegistryArgs, reference: &OciReference) -> RegistryClient {
    let mut settings = RegistrySettings { plain_http: args.plain_http.iter().cloned().collect(), ..Default::default() };
    if let (Some(username), Some(password)) = (&args.username, &args.password) {
        let credentials = Credentials { username: username.clone(), password: password.clone() };
        settings.credentials = BTreeMap::from([(reference.registry.clone(), credentials)]);
    }
    RegistryClient::new(settings)
}

fn parse_reference(text: &str) -> anyhow::Result<OciReference> {
    text.parse::<OciReference>().map_err(anyhow::Error::msg)
}

pub(crate) async fn push(cache: Option<&Path>, args: PushArgs) -> anyhow::Result<ExitCode> {
    let reference = parse_reference(&args.reference)?;
    if reference.digest.is_some() || reference.tag.is_none() {
        bail!("push to a tag, not a digest: oci://REGISTRY/REPOSITORY:TAG (the digest is what the push makes)");
    }
    let key = match &args.sign {
        Some(path) => Some(read_signing_key(path)?),
        None => None,
    };
    let bytes = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let definition = definition_of(cache, &args.file).await?;
    let mut notes = BTreeMap::from([
        (annotations::TITLE.to_owned(), definition.name.clone()),
        (annotations::DESCRIPTION.to_owned(), definition.description.clone()),
        (annotations::VERSION.to_owned(), definition.version.clone()),
        (annotations::CREATED.to_owned(), now_rfc3339()),
    ]);
    notes.insert(annotations::TOOL_METADATA.to_owned(), serde_json::to_string(&definition)?);
    let component = Component { bytes: bytes.into(), annotations: notes, interfaces: None, created: now_rfc3339() };
    let started = Instant::now();
    let published =
        toolcell_oci::push(&client(&args.registry, &reference), &reference, component, key.as_ref()).await?;
    println!("pushed {} ({}) as {}", definition.name, definition.version, published.reference);
    match &key {
        Some(key) => println!(
            "signed with the key {} (a cosign signature, and a Sigstore bundle referrer)",
            key.public_key().hint()
        ),
        None => println!(
            "unsigned: registry tools must be signed unless the operator allows them unsigned; sign with --sign KEY (`toolcell keygen` makes one)"
        ),
    }
    println!("in {}", human_duration(started.elapsed()));
    Ok(ExitCode::SUCCESS)
}

/// The definition of the tool in `file`, as the runtime loads it.
async fn definition_of(cache: Option<&Path>, file: &Path) -> anyhow::Result<toolcell_runtime::ToolDefinition> {
    let mut builder = Runtime::builder().component_file(file);
    if let Some(cache) = cache {
        builder = builder.compile_cache(cache);
    }
    let runtime = builder.build().await?;
    if let Some(diagnostic) = runtime.diagnostics().first() {
        bail!("cannot push {}: it does not load as a tool: {diagnostic}", file.display());
    }
    runtime.definitions().next().cloned().context("the file defines no tool")
}

/// A pull done, and its tag pinned.
struct Done {
    pulled: Pulled,
    lock: Lockfile,
    newly_pinned: bool,
    elapsed: std::time::Duration,
    store: PathBuf,
}

/// Pulls `reference` into the store, checked against `trust`, its tag pinned in the lockfile
/// at `lock_path` (a pin moves only with `update`). `Ok(Err(…))`: the pull was refused.
async fn pull_pinned(
    store: Option<&Path>,
    lock_path: PathBuf,
    reference: &OciReference,
    trust: &Trust,
    registry: &RegistryArgs,
    update: bool,
) -> anyhow::Result<Result<Done, PullError>> {
    let mut lock = Lockfile::read(&lock_path)?;
    let pinned = if update { None } else { lock.pinned(reference) };
    let store = BlobStore::open(match store {
        Some(dir) => dir.to_owned(),
        None => store_dir(None)?,
    })?;
    let puller = Puller::new(client(registry, reference), store);
    let started = Instant::now();
    let pulled = match puller.pull(reference, pinned, trust).await {
        Ok(pulled) => pulled,
        Err(err) => return Ok(Err(err)),
    };
    let elapsed = started.elapsed();
    // A pin moves only when asked (--update), never because a registry answered otherwise.
    let newly_pinned = reference.tag.is_some() && (pinned.is_none() || update) && lock.pin(reference, pulled.digest);
    if newly_pinned {
        lock.write()?;
    }
    Ok(Ok(Done { pulled, lock, newly_pinned, elapsed, store: puller.store().dir().to_owned() }))
}

/// The component at `text` (`oci://…`) for `invoke` or `serve`: pulled as `pull` pulls it
/// (the tag pinned in the tools folder's toolcell.lock, else the current folder's), checked
/// against `trust`, and said on stderr.
pub(crate) async fn pull_component(
    store: Option<&Path>,
    tools_dir: Option<&Path>,
    text: &str,
    trust: &TrustArgs,
    registry: &RegistryArgs,
) -> anyhow::Result<bytes::Bytes> {
    let reference = parse_reference(text)?;
    let trust = trust_of(trust)?;
    let lock_path = tools_dir.unwrap_or(Path::new(".")).join(LOCK_FILE);
    let done = pull_pinned(store, lock_path, &reference, &trust, registry, false).await?.map_err(anyhow::Error::new)?;
    eprintln!(
        "pulled {} in {}, {}",
        done.pulled.reference,
        human_duration(done.elapsed),
        match &done.pulled.verified {
            Verified::Unsigned => "unsigned, as --unsigned allows".to_owned(),
            verified => format!("signed by {}", verified.signer()),
        }
    );
    Ok(done.pulled.component)
}

pub(crate) async fn pull(store: Option<&Path>, tools_dir: Option<&Path>, args: PullArgs) -> anyhow::Result<ExitCode> {
    let reference = parse_reference(&args.reference)?;
    let trust = trust_of(&args.trust)?;
    let lock_path = args.lock.clone().unwrap_or_else(|| tools_dir.unwrap_or(Path::new(".")).join(LOCK_FILE));
    let done = match pull_pinned(store, lock_path, &reference, &trust, &args.registry, args.update).await? {
        Ok(done) => done,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let Done { pulled, lock, newly_pinned, elapsed, store } = done;
    let digest = pulled.digest;
    if let Some(out) = &args.output {
        std::fs::write(out, &pulled.component).with_context(|| format!("cannot write {}", out.display()))?;
    }
    let layer = pulled.manifest.component_layer().map_err(anyhow::Error::msg)?;
    let signer = match (&pulled.verified, pulled.verified.signature()) {
        (Verified::Unsigned, _) => "unsigned, as --unsigned allows".to_owned(),
        (verified, Some(signature)) => format!("signed by {} (signature {signature})", verified.signer()),
        (verified, None) => format!("signed by {}", verified.signer()),
    };
    if args.json {
        let report = serde_json::json!({
            "reference": pulled.reference.to_string(),
            "digest": digest.to_string(),
            "component": { "digest": layer.digest.to_string(), "size": layer.size },
            "verified": verified_json(&pulled.verified),
            "from_store": pulled.from_store,
            "lockfile": lock.path(),
            "elapsed_ms": elapsed.as_secs_f64() * 1000.0,
        });
        println!("{report}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "pulled {}", pulled.reference)?;
    writeln!(out, "  component {} ({} bytes)", layer.digest, layer.size)?;
    writeln!(out, "  {signer}")?;
    let whence = if pulled.from_store { "the store (nothing fetched)" } else { "the registry" };
    writeln!(out, "  from {whence} in {}; kept in {}", human_duration(elapsed), store.display())?;
    if newly_pinned {
        writeln!(out, "  pinned in {}", lock.path().display())?;
    } else if reference.tag.is_some() {
        writeln!(out, "  as pinned in {}", lock.path().display())?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn keygen(prefix: &Path, force: bool) -> anyhow::Result<ExitCode> {
    let private = prefix.with_extension("key");
    let public = prefix.with_extension("pub");
    for path in [&private, &public] {
        // (`symlink_metadata`: a dangling symlink is there too.)
        if std::fs::symlink_metadata(path).is_ok() && !force {
            bail!("{} exists: choose another name, or replace it with --force", path.display());
        }
    }
    let (key, pem) = SigningKey::generate();
    write_new(&private, pem.as_bytes(), 0o600, force)?;
    write_new(&public, key.public_key().to_pem().as_bytes(), 0o644, force)?;
    println!(
        "wrote the private key {} (readable by you only) and the public key {}",
        private.display(),
        public.display()
    );
    println!("sign with `toolcell push FILE oci://… --sign {}`; trust it in the policy with", private.display());
    println!("  [signers.NAME]\n  key = \"{}\"", public.display());
    Ok(ExitCode::SUCCESS)
}

/// Writes a new file at `path` (a symlink there is replaced with `replace`, never written
/// through: `create_new` does not follow one).
fn write_new(path: &Path, bytes: &[u8], mode: u32, replace: bool) -> anyhow::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if replace {
        let _ = std::fs::remove_file(path);
    }
    options.create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path).with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(bytes)?;
    Ok(())
}

fn read_signing_key(path: &Path) -> anyhow::Result<SigningKey> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the key {}", path.display()))?;
    SigningKey::from_pem(&text).map_err(|why| anyhow::anyhow!("the key {} cannot sign: {why}", path.display()))
}

/// Who a registry tool must be signed by: --key, --identity, or --unsigned.
fn trust_of(args: &TrustArgs) -> anyhow::Result<Trust> {
    if args.unsigned {
        return Ok(Trust::Unsigned);
    }
    let mut signers: Vec<Signer> =
        args.keys.iter().map(|path| read_public_key(path).map(Signer::Key)).collect::<anyhow::Result<_>>()?;
    if let (Some(identity), Some(issuer), Some(root)) = (&args.identity, &args.issuer, &args.trusted_root) {
        let root = read_trust_root(root)?;
        signers.push(Signer::Identity(Identity {
            name: identity.clone(),
            identity: identity.clone(),
            issuer: issuer.clone(),
            root,
        }));
    }
    if signers.is_empty() {
        bail!(
            "a tool from a registry must be signed: name the public key it must be signed by with --key FILE.pub, or the identity that signed it keyless with --identity ID --issuer URL --trusted-root trusted_root.json, or take it unsigned with --unsigned"
        );
    }
    Ok(Trust::Signers(signers))
}

/// `pull --json`'s `verified`: who signed it, or null.
fn verified_json(verified: &Verified) -> serde_json::Value {
    match verified {
        Verified::Key { signer, signature } => {
            serde_json::json!({ "signer": signer, "signature": signature.to_string() })
        }
        Verified::Identity { signer, identity, issuer, logged_at, signature } => serde_json::json!({
            "signer": signer,
            "identity": identity,
            "issuer": issuer,
            "logged_at": logged_at,
            "signature": signature.to_string(),
        }),
        _ => serde_json::Value::Null,
    }
}

fn read_trust_root(path: &Path) -> anyhow::Result<std::sync::Arc<TrustRoot>> {
    let root = TrustRoot::from_file(path.display().to_string(), path)
        .map_err(|why| anyhow::anyhow!("--trusted-root {why}"))?;
    Ok(std::sync::Arc::new(root))
}

fn read_public_key(path: &Path) -> anyhow::Result<PublicKey> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the key {}", path.display()))?;
    let name = path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
    PublicKey::from_pem(name, &text).map_err(|why| anyhow::anyhow!("the key {} cannot be used: {why}", path.display()))
}

/// Now, as RFC 3339 in UTC (seconds).
fn now_rfc3339() -> String {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// The calendar date `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}
