//! A real OCI registry on 127.0.0.1 for the tests: Debian's `docker-registry` (the CNCF
//! distribution registry), with its storage in a temporary folder and deletes enabled. It is
//! stopped when dropped, and stops itself after ten minutes whatever happens to the test.
//! `.ci/run` installs it; a test that needs it fails (never skips) without it.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary Debian's package installs.
const BINARY: &str = "docker-registry";

/// A registry serving on 127.0.0.1 until dropped.
#[derive(Debug)]
pub struct LocalRegistry {
    address: SocketAddr,
    dir: PathBuf,
    child: Child,
}

impl LocalRegistry {
    /// Starts one, storing under a new temporary folder named after `label`.
    ///
    /// # Panics
    /// When `docker-registry` is not installed (`apt-get install docker-registry`) or does not
    /// answer within 20 s.
    pub fn start(label: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("toolcell-registry-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("storage")).expect("registry folder");
        let address = free_address();
        let config = dir.join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {address}\n",
                dir.join("storage").display()
            ),
        )
        .expect("registry config");
        let log = std::fs::File::create(dir.join("registry.log")).expect("registry log");
        let child = Command::new("timeout")
            .args(["600", BINARY, "serve"])
            .arg(&config)
            .env("REGISTRY_HTTP_SECRET", "toolcell-tests")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|err| {
                panic!("cannot start {BINARY} ({err}): install it with `apt-get install docker-registry`")
            });
        let registry = Self { address, dir, child };
        registry.wait_until_up();
        registry
    }

    fn wait_until_up(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if TcpStream::connect(self.address).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = std::fs::read_to_string(self.dir.join("registry.log")).unwrap_or_default();
        panic!("{BINARY} did not answer on {} within 20 s; its log:\n{log}", self.address);
    }

    /// `127.0.0.1:PORT`, as an OCI reference names it.
    pub fn host(&self) -> String {
        self.address.to_string()
    }

    /// Where it keeps its blobs and manifests (to tamper with them).
    pub fn storage(&self) -> PathBuf {
        self.dir.join("storage").join("docker/registry/v2")
    }

    /// Where a blob's data file is in its storage.
    pub fn blob_file(&self, hex: &str) -> PathBuf {
        self.storage().join("blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops it (the registry goes away; its storage stays until drop).
    pub fn stop(&mut self) {
        // SIGTERM, which `timeout` passes on to the registry (a SIGKILL would leave it running).
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        }
        let _ = self.child.wait();
    }
}

impl Drop for LocalRegistry {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An address on 127.0.0.1 no one listens on now.
fn free_address() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address")
}
