//! `toolcell-task-tools DIR`: writes into DIR the test guests the MCP conformance suite's
//! tasks scenarios call (`greet`, `slow_compute`, `failing_job`) and the policy that makes
//! them what the suite expects: `greet` never a task, `slow_compute` always one (and allowed
//! the minute the suite's cancellation checks ask of it), `failing_job` requiring one.
//! tests/peers/conformance/check.py serves them beside the built-in tools.

use std::path::Path;
use std::process::ExitCode;

/// The policy of the folder.
const POLICY: &str = "\
[tools.greet]
task = \"never\"

[tools.slow_compute]
task = \"always\"
limits = { timeout_ms = 120000 }

[tools.failing_job]
task = \"required\"
";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(dest), None) = (args.next(), args.next()) else {
        eprintln!("usage: toolcell-task-tools DIR (writes the tasks fixture tools and their policy into DIR)");
        return ExitCode::from(2);
    };
    match write_tools(Path::new(&dest)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "toolcell-task-tools: {err}; rebuild the guests with `cargo build -p toolcell-tests`, check DIR is \
                 writable"
            );
            ExitCode::FAILURE
        }
    }
}

fn write_tools(dest: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dest)?;
    for guest in [toolcell_tests::GREET, toolcell_tests::SLOW_COMPUTE, toolcell_tests::FAILING_JOB] {
        let file = Path::new(guest);
        std::fs::copy(file, dest.join(file.file_name().unwrap_or_default()))
            .map_err(|err| std::io::Error::new(err.kind(), format!("cannot copy {guest}: {err}")))?;
    }
    std::fs::write(dest.join("toolcell.toml"), POLICY)
}
