//! Build tool components for `wasm32-wasip2` from a build script.
//!
//! A build script calls [`GuestBuild::run`] to compile some of the workspace's packages as
//! components with a nested `cargo build`, then gets the `.wasm` files copied into a folder
//! of its `OUT_DIR`. The nested build uses its own target directory (next to the outer one,
//! shared by every profile, or [`GUEST_TARGET_DIR_VAR`]), so it never waits on the outer
//! build's lock and rebuilds only what changed.

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod progress;
mod section;

pub use section::{METADATA_SECTION, metadata_section, with_metadata_section};

use std::collections::BTreeSet;
use std::env;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Instant;

use progress::Progress;

/// Names the folder the guests are built in, overriding `<outer target dir>/wasm-guests`.
pub const GUEST_TARGET_DIR_VAR: &str = "TOOLCELL_GUEST_TARGET_DIR";

/// The target every toolcell component is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// One built component.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The cargo target's name (`toolcell_tool_calculator`, or an example's name).
    pub target_name: String,
    /// Where the `.wasm` file was copied.
    pub path: PathBuf,
}

/// A nested `cargo build --release --target wasm32-wasip2` of some workspace packages.
#[derive(Debug, Default)]
pub struct GuestBuild {
    packages: Vec<String>,
    libs: bool,
    examples: bool,
    bins: bool,
}

impl GuestBuild {
    /// A build of nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds (some targets of) this package.
    pub fn package(mut self, name: &str) -> Self {
        self.packages.push(name.to_owned());
        self
    }

    /// Builds the packages' libraries (declared with `crate-type = ["cdylib"]`).
    pub fn libs(mut self) -> Self {
        self.libs = true;
        self
    }

    /// Also builds the packages' examples (declared with `crate-type = ["cdylib"]`).
    pub fn examples(mut self) -> Self {
        self.examples = true;
        self
    }

    /// Also builds the packages' binaries (`wasi:cli` command components).
    pub fn bins(mut self) -> Self {
        self.bins = true;
        self
    }

    /// Runs the build and copies every component into `$OUT_DIR/<out_subdir>/`, named by
    /// `rename` applied to the cargo target's name. Registers `rerun-if-changed` for every
    /// source file the components were built from, `wit/` and `guest-sdk/`; the calling
    /// build script must add the guest packages' own folders (so new files are noticed).
    ///
    /// Panics with instructions when the target is missing or the build fails: a build
    /// script has no better way to report it.
    #[expect(clippy::expect_used, reason = "it runs in build scripts, which report a failure by panicking")]
    pub fn run(self, out_subdir: &str, rename: impl Fn(&str) -> String) -> Vec<Artifact> {
        let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
        let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set"));
        let toolchain = Toolchain::detect(&manifest_dir);
        if let Err(err) = toolchain.ensure_target_installed() {
            panic!("{err}");
        }
        let target_dir = guest_target_dir(&out_dir);

        let mut command = toolchain.command(&toolchain.cargo);
        command
            .args(["build", "--release", "--target", TARGET, "--message-format=json-render-diagnostics"])
            .env("CARGO_TARGET_DIR", &target_dir)
            .stdout(Stdio::piped());
        // The outer build's flags, wrappers (clippy-driver) and target are for the host (a
        // fuzzing build's sanitizer-coverage flags would not even link for wasm).
        for var in
            ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "RUSTC_WORKSPACE_WRAPPER", "RUSTC_WRAPPER", "CARGO_BUILD_TARGET"]
        {
            command.env_remove(var);
        }
        // So are its profile settings (`CARGO_PROFILE_RELEASE_OPT_LEVEL=3 fuzz/run ...`): the
        // guests are built the same, and so are the same components, whoever builds them.
        for (var, _) in env::vars_os() {
            if var.to_str().is_some_and(|var| var.starts_with("CARGO_PROFILE_")) {
                command.env_remove(var);
            }
        }
        // And without debug info whatever the workspace's release profile says (the bench's
        // keeps line tables, for perf): a tool `toolcell build` makes has none, and wasmtime
        // keeps a component's DWARF in its compiled code. The bench's test tools were 4.2 MB
        // each with it, 0.3 MB without.
        command.env("CARGO_PROFILE_RELEASE_DEBUG", "false");
        for package in &self.packages {
            command.args(["--package", package]);
        }
        if self.libs {
            command.arg("--lib");
        }
        if self.examples {
            command.arg("--examples");
        }
        if self.bins {
            command.arg("--bins");
        }

        command.stderr(Stdio::piped());

        let started = Instant::now();
        let mut child =
            command.spawn().unwrap_or_else(|err| panic!("could not run cargo for the {TARGET} guests: {err}"));
        let stderr = child.stderr.take().expect("stderr is piped");
        let what = format!("the components of {} for {TARGET}", env::var("CARGO_PKG_NAME").unwrap_or_default());
        let shown = show_progress(stderr, Progress::to_cargo(), what.clone(), &target_dir);
        let stdout = child.stdout.take().expect("stdout is piped");
        let built: Vec<(String, PathBuf)> = read_components(BufReader::new(stdout))
            .into_iter()
            .map(|component| (component.target_name, component.wasm))
            .collect();
        let status = child.wait().expect("cargo ran");
        if let Ok(Some(mut progress)) = shown.join() {
            let mut names: Vec<String> = built.iter().map(|(name, _)| rename(name)).collect();
            names.sort();
            let finished = progress::elapsed(started.elapsed());
            match status.success() {
                true => progress.status("Finished", &format!("{what} in {finished}: {}", names.join(", "))),
                false => progress.status("Failed", &format!("{what} after {finished}; its errors follow")),
            }
        }
        if !status.success() {
            panic!(
                "building the {TARGET} guests failed (see the errors above). \
                 If the target is missing, run `rustup target add {TARGET}`."
            );
        }

        let dest_dir = out_dir.join(out_subdir);
        std::fs::create_dir_all(&dest_dir).expect("create the guests folder in OUT_DIR");
        let workspace_root = workspace_root(&manifest_dir);
        let mut sources = BTreeSet::new();
        let mut artifacts = Vec::new();
        for (target_name, wasm) in built {
            let path = dest_dir.join(format!("{}.wasm", rename(&target_name)));
            std::fs::copy(&wasm, &path)
                .unwrap_or_else(|err| panic!("copy {} to {}: {err}", wasm.display(), path.display()));
            sources.extend(dep_info_sources(&wasm.with_extension("d"), &workspace_root));
            artifacts.push(Artifact { target_name, path });
        }
        for source in sources {
            println!("cargo:rerun-if-changed={}", source.display());
        }
        // The dep-info files miss what is new (a guest file added) and what guests use only
        // through proc macros; watch the contract and the SDK whole.
        for watched in ["Cargo.lock", "wit", "guest-sdk"] {
            println!("cargo:rerun-if-changed={}", workspace_root.join(watched).display());
        }
        artifacts.sort_by(|a, b| a.target_name.cmp(&b.target_name));
        artifacts
    }
}

/// Copies the nested cargo's stderr to this build script's own (which cargo shows when the
/// build fails) and, live, its status lines (`Compiling serde v1.0.229`) with a first line
/// that says what is being built. A build with nothing to compile shows nothing. Gives back
/// the progress when it showed something, for the closing line.
fn show_progress(
    stderr: ChildStderr,
    mut progress: Progress,
    what: String,
    target_dir: &Path,
) -> JoinHandle<Option<Progress>> {
    let target_dir = target_dir.display().to_string();
    std::thread::spawn(move || {
        let mut started = false;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            eprintln!("{line}");
            let Some((verb, rest)) = progress::status_line(&line) else { continue };
            if verb == "Finished" {
                continue;
            }
            if !started {
                started = true;
                progress.status(
                    "Building",
                    &format!("{what}: a nested `cargo build --release` into {target_dir} (minutes the first time)"),
                );
            }
            progress.status(verb, &format!("{rest} [{TARGET}]"));
        }
        started.then_some(progress)
    })
}

/// A `.wasm` file a cargo build produced.
#[derive(Debug, Clone)]
pub struct Component {
    /// The cargo target's name (`toolcell_tool_calculator`, or an example's name).
    pub target_name: String,
    /// The target's kinds (`cdylib`, `rlib`, `bin`, `example`).
    pub kinds: Vec<String>,
    /// The `Cargo.toml` of the package it belongs to.
    pub manifest_path: PathBuf,
    /// The `.wasm` file in the target directory.
    pub wasm: PathBuf,
}

/// The `.wasm` files among the `compiler-artifact` messages of `cargo build
/// --message-format=json...` read from `messages`; other lines are skipped.
pub fn read_components(messages: impl BufRead) -> Vec<Component> {
    let mut components = Vec::new();
    for line in messages.lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let wasm = message["filenames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|file| file.as_str())
            .find(|file| file.ends_with(".wasm"));
        let Some(wasm) = wasm else { continue };
        let strings = |value: &serde_json::Value| -> Vec<String> {
            value.as_array().into_iter().flatten().filter_map(|kind| kind.as_str().map(str::to_owned)).collect()
        };
        components.push(Component {
            target_name: message["target"]["name"].as_str().unwrap_or_default().to_owned(),
            kinds: strings(&message["target"]["kind"]),
            manifest_path: PathBuf::from(message["manifest_path"].as_str().unwrap_or_default()),
            wasm: PathBuf::from(wasm),
        });
    }
    components
}

/// Writes `pub const NAME: &str = "path";` (documented) for each artifact, NAME being its file stem in
/// upper case, for a crate to `include!`.
pub fn path_constants(artifacts: &[Artifact]) -> String {
    let mut code = String::new();
    for artifact in artifacts {
        let stem = artifact.path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let name = stem.to_uppercase().replace('-', "_");
        let _ = writeln!(
            code,
            "/// The component `{stem}`, built for this crate.\npub const {name}: &str = {:?};",
            artifact.path
        );
    }
    code
}

/// The cargo and rustc that build the guests, run in the guest package's folder.
///
/// Under rustup, that is the toolchain rustup picks for the workspace (rust-toolchain.toml),
/// not the one building the host: `cargo +nightly fuzz build` builds the host with a nightly
/// whose wasm32-wasip2 standard library may not be downloadable any more, and a component
/// does not depend on the host's compiler. Without rustup, the outer build's own cargo and
/// rustc.
#[derive(Debug, Clone)]
pub struct Toolchain {
    cargo: OsString,
    rustc: OsString,
    rustup: Option<OsString>,
    dir: PathBuf,
}

impl Toolchain {
    /// The toolchain that builds the package in `dir`.
    pub fn detect(dir: &Path) -> Self {
        let proxies = env::var_os("RUSTUP_TOOLCHAIN").and_then(|_| {
            let cargo_home = env::var_os("CARGO_HOME").map(PathBuf::from)?;
            let bin = cargo_home.join("bin");
            bin.join("cargo").is_file().then_some(bin)
        });
        match proxies {
            Some(bin) => Self {
                cargo: bin.join("cargo").into(),
                rustc: bin.join("rustc").into(),
                rustup: Some(bin.join("rustup").into()),
                dir: dir.to_owned(),
            },
            None => Self {
                cargo: env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
                rustc: env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()),
                rustup: None,
                dir: dir.to_owned(),
            },
        }
    }

    /// `cargo` of this toolchain, run in the package's folder.
    pub fn cargo(&self) -> Command {
        self.command(&self.cargo)
    }

    fn command(&self, program: &OsStr) -> Command {
        let mut command = Command::new(program);
        command.current_dir(&self.dir);
        if self.rustup.is_some() {
            // Let the proxies pick the workspace's toolchain, not the outer build's.
            for var in ["RUSTUP_TOOLCHAIN", "RUSTC", "RUSTDOC", "CARGO"] {
                command.env_remove(var);
            }
        } else {
            command.env("RUSTC", &self.rustc);
        }
        command
    }

    /// Adds [`TARGET`] to the toolchain with rustup when it is missing.
    ///
    /// # Errors
    /// What to run when the target is missing and could not be added.
    pub fn ensure_target_installed(&self) -> Result<(), String> {
        if self.target_installed() {
            return Ok(());
        }
        // rust-toolchain.toml names the target, but rustup does not add a missing target to
        // an already-installed toolchain; add it once.
        Progress::to_cargo().status("Installing", &format!("the {TARGET} target with rustup (once)"));
        let rustup = self.rustup.clone().unwrap_or_else(|| "rustup".into());
        let added = self.command(&rustup).args(["target", "add", TARGET]).status().is_ok_and(|status| status.success());
        if !added || !self.target_installed() {
            return Err(format!(
                "the {TARGET} target is not installed and could not be added: run `rustup target add {TARGET}`"
            ));
        }
        Ok(())
    }

    fn target_installed(&self) -> bool {
        self.command(&self.rustc)
            .args(["--print", "target-libdir", "--target", TARGET])
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()))
            .is_some_and(|libdir| libdir.join("libstd.rlib").exists() || has_std(&libdir))
    }
}

fn has_std(libdir: &Path) -> bool {
    std::fs::read_dir(libdir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| entry.file_name().to_string_lossy().starts_with("libstd-"))
}

/// The folder guests are built in (see [`GUEST_TARGET_DIR_VAR`]), for a build script to keep
/// what every configuration of the outer build should share, such as a component that builds
/// to other bytes each time.
///
/// # Panics
/// Outside a build script (no `OUT_DIR`): a build script has no better way to report it.
#[expect(clippy::expect_used, reason = "it runs in build scripts, which report a failure by panicking")]
pub fn shared_guest_dir() -> PathBuf {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    guest_target_dir(&out_dir)
}

/// Where the guests are built: `TOOLCELL_GUEST_TARGET_DIR` if set, so that the build of
/// another workspace (the fuzz targets') reuses the guests the main build compiled; else
/// `<outer target dir>/wasm-guests`, shared by every profile and configuration of the outer
/// build (`check`, `test`, features), so each guest is compiled once.
fn guest_target_dir(out_dir: &Path) -> PathBuf {
    println!("cargo:rerun-if-env-changed={GUEST_TARGET_DIR_VAR}");
    if let Some(dir) = env::var_os(GUEST_TARGET_DIR_VAR).filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    let triple = env::var("TARGET").unwrap_or_default();
    outer_target_dir(out_dir, &triple).unwrap_or(out_dir).join("wasm-guests")
}

/// The outer build's target dir, from a build script's `OUT_DIR`
/// (`<target>[/<triple>]/<profile>/build/<package>-<hash>/out`): the nearest ancestor cargo
/// marked with `CACHEDIR.TAG`, else the folder above `<profile>/build`. (Cargo writes the tag
/// only into a target dir it created: one made beforehand, by a CI script say, has none, and
/// each configuration then built every guest again in its own `OUT_DIR`.)
fn outer_target_dir<'a>(out_dir: &'a Path, triple: &str) -> Option<&'a Path> {
    if let Some(tagged) = out_dir.ancestors().find(|dir| dir.join("CACHEDIR.TAG").is_file()) {
        return Some(tagged);
    }
    let build = out_dir.ancestors().find(|dir| dir.file_name().is_some_and(|name| name == "build"))?;
    let above_profile = build.parent()?.parent()?;
    // With `--target TRIPLE`, `<profile>` sits in a folder named for the triple (`TARGET`).
    if !triple.is_empty() && above_profile.file_name().is_some_and(|name| name == triple) {
        above_profile.parent()
    } else {
        Some(above_profile)
    }
}

fn workspace_root(manifest_dir: &Path) -> PathBuf {
    manifest_dir.ancestors().filter(|dir| dir.join("Cargo.lock").is_file()).last().unwrap_or(manifest_dir).to_path_buf()
}

/// The workspace source files listed in a rustc dep-info (`.d`) file.
fn dep_info_sources(dep_info: &Path, workspace_root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dep_info) else { return Vec::new() };
    let Some((_, deps)) = text.lines().next().and_then(|line| line.split_once(": ")) else { return Vec::new() };
    let mut sources = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => sources.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    sources.push(current);
    sources.into_iter().filter(|s| !s.is_empty()).map(PathBuf::from).filter(|p| p.starts_with(workspace_root)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outer_target_dir_is_found_with_or_without_its_cachedir_tag() {
        let root = std::env::temp_dir().join(format!("toolcell-guest-build-outer-{}", std::process::id()));
        let target = root.join("target");
        let out = target.join("debug/build/toolcell-tools-0123/out");
        let cross = target.join("x86_64-unknown-linux-gnu/release/build/toolcell-tools-0123/out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(&cross).unwrap();
        let host = "x86_64-unknown-linux-gnu";
        assert_eq!(outer_target_dir(&out, host), Some(target.as_path()), "no tag: by the layout");
        assert_eq!(outer_target_dir(&cross, host), Some(target.as_path()), "no tag, cross: by the layout");
        std::fs::write(target.join("CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55").unwrap();
        assert_eq!(outer_target_dir(&out, host), Some(target.as_path()), "tagged");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
