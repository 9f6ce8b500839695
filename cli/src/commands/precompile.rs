//! `toolcell precompile --out DIR`: the built-in tools compiled ahead of time, one artifact
//! each (`NAME.cwasm`), for a build of toolcell that ships them. toolcell-tools' build script
//! embeds the artifacts of `TOOLCELL_PRECOMPILED_DIR` (`toolcell_tools::PRECOMPILED`), and
//! every runtime this binary builds then takes them (`load::shipped_code`). With `--portable`,
//! the code is for any CPU of this architecture, not only those with this one's features.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, anyhow};
use toolcell_author::shell_quote;
use toolcell_runtime::Runtime;

use crate::print::human_duration;

pub(crate) async fn precompile(out: &Path, portable: bool) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    // A runtime built as every command's is (the default engine settings), so the code fits
    // the runtimes of the binary that ships it.
    let compiler = Runtime::builder().build().await?;
    let started = Instant::now();
    for (file, component) in toolcell_tools::ALL {
        let compiling = Instant::now();
        eprintln!("toolcell: compiling {file} ({:.1} MiB)", component.len() as f64 / f64::from(1 << 20));
        let artifact = if portable { compiler.precompile_portable(component) } else { compiler.precompile(component) };
        let artifact = artifact.map_err(|reason| anyhow!("{file} {reason}"))?;
        let path = out.join(Path::new(file).with_extension("cwasm"));
        std::fs::write(&path, &artifact).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("toolcell: compiled {file} in {}", human_duration(compiling.elapsed()));
    }
    // Absolute: cargo runs the build script that reads it in another folder.
    let out = std::fs::canonicalize(out).with_context(|| format!("cannot resolve {}", out.display()))?;
    let dir = shell_quote(&out.display().to_string());
    let cpus = if portable { format!("any {} CPU", std::env::consts::ARCH) } else { "this CPU".to_owned() };
    println!(
        "{} built-in tools compiled into {} in {}. Build toolcell with them (for {cpus}): \
         TOOLCELL_PRECOMPILED_DIR={dir} cargo build --release -p toolcell-cli",
        toolcell_tools::ALL.len(),
        out.display(),
        human_duration(started.elapsed()),
    );
    Ok(ExitCode::SUCCESS)
}
