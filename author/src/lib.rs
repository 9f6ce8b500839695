//! What a tool author's commands do: `toolcell new` creates a tool project ready to build,
//! `toolcell build` compiles one into components, and `toolcell test` builds the project's
//! test harness ([`selftest`]) to run its tests inside the component.
//!
//! Checking that a component loads as a tool is the runtime's job; the CLI does it after
//! [`build`]. This crate only knows projects: their files and their toolchains.

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod javascript;
mod python;
mod rust;
mod sdk;
pub mod selftest;

use std::path::{Path, PathBuf};

/// The languages a tool can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Language {
    /// A Rust crate depending on `toolcell-guest`, built with cargo for `wasm32-wasip2`.
    Rust,
    /// A Python module with one `@tool` function (the SDK in `sdk/python`), built with
    /// componentize-py.
    Python,
    /// A JavaScript module whose default export is a `tool({...})` (the SDK in `sdk/js`),
    /// built with esbuild and componentize-js.
    JavaScript,
}

impl Language {
    /// The language's name for people.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
        }
    }
}

/// What [`create`] made.
#[derive(Debug, Clone)]
pub struct Created {
    /// The project's folder.
    pub dir: PathBuf,
    /// The files written, relative to `dir`.
    pub files: Vec<PathBuf>,
    /// Arguments the example tool accepts, as JSON: for the first `invoke`.
    pub example_arguments: String,
    /// The shell command that runs the project's tests natively, from its folder.
    pub test_command: String,
}

/// One component [`build`] produced.
#[derive(Debug, Clone)]
pub struct Built {
    /// The `.wasm` file, in the project's build output.
    pub wasm: PathBuf,
    /// The project (for Rust, the package's `Cargo.toml`) it came from.
    pub project: PathBuf,
}

/// Why a project could not be created or built. Each message says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorError {
    /// The name cannot be a tool's (and a crate's or module's) name.
    #[error("`{name}` cannot name a tool: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong and what to use instead.
        reason: String,
    },
    /// The folder to create exists and is not empty.
    #[error("{} already exists and is not empty: choose another NAME or --path", dir.display())]
    AlreadyExists {
        /// The folder.
        dir: PathBuf,
    },
    /// The folder does not exist.
    #[error("{} does not exist: give the folder of a tool project, or create one with `toolcell new NAME`", dir.display())]
    NoSuchFolder {
        /// The folder.
        dir: PathBuf,
    },
    /// The folder holds no project of a known language.
    #[error(
        "{} holds no tool project (no Cargo.toml, pyproject.toml or package.json): run `toolcell build` in a tool's folder, or create one with `toolcell new NAME`",
        dir.display()
    )]
    NotAProject {
        /// The folder.
        dir: PathBuf,
    },
    /// A language's SDK is not where this binary expects it.
    #[error(
        "the {language} SDK is not at {}: tools in {language} are built with the SDK of the toolcell source tree this binary was built from; set TOOLCELL_SDK_DIR to that tree's sdk/ folder",
        dir.display()
    )]
    SdkMissing {
        /// The language.
        language: String,
        /// Where it was looked for.
        dir: PathBuf,
    },
    /// A build tool could not be started.
    #[error("could not run {program}: {source}; is it installed and on PATH?")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The compiler's target is missing and could not be added.
    #[error("{0}")]
    Toolchain(String),
    /// The build itself failed; its output has been shown.
    #[error("the build failed ({program} exited with {status}): fix the errors it printed above and build again")]
    BuildFailed {
        /// The program that failed.
        program: String,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
    /// The build succeeded but made no component.
    #[error("{0}")]
    NoComponent(String),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Creates a tool project named `name` in `dir` (which must not exist or be empty): the
/// manifest, an example tool function with an enum and an optional parameter, and tests
/// that call it natively.
///
/// # Errors
/// [`AuthorError::InvalidName`], [`AuthorError::AlreadyExists`], or an I/O error.
pub fn create(name: &str, dir: &Path, language: Language) -> Result<Created, AuthorError> {
    check_name(name)?;
    let empty = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => true,
        Err(source) => return Err(AuthorError::Io { path: dir.to_owned(), source }),
    };
    if !empty {
        return Err(AuthorError::AlreadyExists { dir: dir.to_owned() });
    }
    let files = match language {
        Language::Rust => rust::project_files(name),
        Language::Python => python::project_files(name)?,
        Language::JavaScript => javascript::project_files(name)?,
    };
    for (relative, contents) in &files {
        let path = dir.join(relative);
        let parent = path.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(|source| AuthorError::Io { path: parent.to_owned(), source })?;
        std::fs::write(&path, contents).map_err(|source| AuthorError::Io { path, source })?;
    }
    let test_command = match language {
        Language::Rust => "cargo test".to_owned(),
        Language::Python => python::test_command()?,
        Language::JavaScript => javascript::test_command(),
    };
    Ok(Created {
        dir: dir.to_owned(),
        files: files.into_iter().map(|(relative, _)| relative).collect(),
        // Every language's template has the same example tool.
        example_arguments: EXAMPLE_ARGUMENTS.to_owned(),
        test_command,
    })
}

/// Builds the tool project in `dir` for release and returns its components. The build's
/// own progress and errors go to this process's stderr.
///
/// # Errors
/// [`AuthorError::NotAProject`] when `dir` holds no project; [`AuthorError::BuildFailed`]
/// when the compiler fails; [`AuthorError::NoComponent`] when it made no `.wasm` (for Rust:
/// `crate-type` lacks `cdylib`).
pub fn build(dir: &Path) -> Result<Vec<Built>, AuthorError> {
    let language = detect(dir)?;
    let dir = dir.canonicalize().map_err(|source| AuthorError::Io { path: dir.to_owned(), source })?;
    match language {
        Language::Rust => rust::build(&dir),
        Language::Python => python::build(&dir),
        Language::JavaScript => javascript::build(&dir),
    }
}

/// Builds the Python tool project in `dir` into the component file `wasm`, for a build
/// script (which must write only under its `OUT_DIR`). Returns the files besides the
/// project's that the build read (the Python SDK), for `cargo:rerun-if-changed`.
///
/// # Errors
/// As [`build`].
pub fn build_python_to(dir: &Path, wasm: &Path) -> Result<Vec<PathBuf>, AuthorError> {
    let dir = dir.canonicalize().map_err(|source| AuthorError::Io { path: dir.to_owned(), source })?;
    python::build_to(&dir, wasm)?;
    python::sdk_inputs()
}

/// The files besides a Python project's own that its build reads: the Python SDK's package and
/// build script, and the pinned build tools (folders among them hold more files).
///
/// # Errors
/// [`AuthorError`] when the SDK is not found.
pub fn python_build_inputs() -> Result<Vec<PathBuf>, AuthorError> {
    python::sdk_inputs()
}

/// The language of the project in `dir`.
///
/// # Errors
/// [`AuthorError::NotAProject`] when it holds none.
pub fn detect(dir: &Path) -> Result<Language, AuthorError> {
    if !dir.exists() {
        return Err(AuthorError::NoSuchFolder { dir: dir.to_owned() });
    }
    let manifests =
        [("Cargo.toml", Language::Rust), ("pyproject.toml", Language::Python), ("package.json", Language::JavaScript)];
    manifests
        .into_iter()
        .find(|(manifest, _)| dir.join(manifest).is_file())
        .map(|(_, language)| language)
        .ok_or_else(|| AuthorError::NotAProject { dir: dir.to_owned() })
}

/// Arguments every template's example tool accepts.
const EXAMPLE_ARGUMENTS: &str = r#"{"text": "one two three"}"#;

/// `text` quoted for a POSIX shell when it needs to be.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', "'\\''")) }
}

/// A title for people from a tool's name: `text_stats` and `text-stats` give `Text stats`.
pub(crate) fn title_of(name: &str) -> String {
    let words = name.split(['_', '-']).filter(|word| !word.is_empty()).collect::<Vec<_>>().join(" ");
    let mut chars = words.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// A tool name that is also a valid crate, module and function name in every language:
/// lower case ASCII letters, digits and `_` or `-`, starting with a letter, at most 64
/// characters (the host's limit).
fn check_name(name: &str) -> Result<(), AuthorError> {
    let invalid = |reason: &str| AuthorError::InvalidName { name: name.to_owned(), reason: reason.to_owned() };
    if name.is_empty() || name.len() > 64 {
        return Err(invalid("use 1 to 64 characters"));
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(invalid("start it with a lower case letter (a-z)"));
    }
    if !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-') {
        return Err(invalid("use lower case letters, digits, `_` and `-` only, e.g. `word_count`"));
    }
    if rust::is_keyword(&name.replace('-', "_")) {
        return Err(invalid("it is a Rust keyword; the tool's function needs another name, e.g. `my_tool`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_name_in_words() {
        assert_eq!(title_of("text_stats"), "Text stats");
        assert_eq!(title_of("word-count"), "Word count");
        assert_eq!(title_of("x"), "X");
    }

    #[test]
    fn names_a_model_and_every_toolchain_accept_pass() {
        for name in ["word_count", "slugify", "http-get2", "a"] {
            check_name(name).unwrap();
        }
    }

    #[test]
    fn other_names_are_refused_with_what_to_use_instead() {
        for (name, says) in [
            ("", "1 to 64"),
            ("WordCount", "lower case"),
            ("2fast", "start it with a lower case letter"),
            ("word count", "lower case letters, digits"),
            ("match", "Rust keyword"),
            ("self", "Rust keyword"),
        ] {
            let error = check_name(name).unwrap_err().to_string();
            assert!(error.contains(says), "{name:?}: {error}");
        }
        assert!(check_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn creating_refuses_a_folder_that_is_not_empty_and_writes_nothing() {
        let dir = std::env::temp_dir().join(format!("toolcell-author-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("keep.txt"), "mine").unwrap();
        let error = create("word_count", &dir, Language::Rust).unwrap_err();
        assert!(matches!(error, AuthorError::AlreadyExists { .. }), "{error}");
        assert!(!dir.join("Cargo.toml").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_without_a_project_is_reported_with_what_to_do() {
        let error = detect(Path::new(env!("CARGO_MANIFEST_DIR")).join("src").as_path()).unwrap_err();
        assert!(error.to_string().contains("toolcell new NAME"), "{error}");
    }
}
