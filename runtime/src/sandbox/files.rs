//! Open files: a host file descriptor for every file or directory a tool opens in a granted
//! directory, held until the tool drops the descriptor and every stream it read or wrote
//! through. A call may hold [`MAX_OPEN_FILES_PER_CALL`] at once and all calls of a runtime
//! [`MAX_OPEN_FILES_PER_RUNTIME`]: past either, the open fails inside the tool (an error it
//! can handle, `quota`), and a call that then fails is `resource_limit`. The rest of the host
//! (connections, the compile cache, other calls) keeps its descriptors.
//!
//! `wasi:filesystem`'s `open-at` and `*-via-stream` are linked to wrappers of wasmtime-wasi's
//! own functions that count; what a call holds is recounted from its resource table at each
//! new open (a descriptor or stream the tool dropped is gone from it), and given back
//! whole when the call ends.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::WasiFilesystemView as _;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    Descriptor, DescriptorFlags, ErrorCode, Filesize, Host, HostDescriptor, OpenFlags, PathFlags,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, FsError};

/// What the wrappers need of a store's data, besides its WASI context.
pub(crate) trait FilesView: WasiView + Send + 'static {
    /// The files the call holds open, and the resource table they are recounted from.
    fn open_files(&mut self) -> (&mut OpenFiles, &ResourceTable);
}

/// Files and directories one call may hold open at once (streams through them included).
pub(crate) const MAX_OPEN_FILES_PER_CALL: usize = 64;
/// Files and directories all calls of a runtime may hold open at once.
pub(crate) const MAX_OPEN_FILES_PER_RUNTIME: usize = 256;

/// The interface whose functions are wrapped, as wasmtime-wasi defines it.
const INTERFACE: &str = "wasi:filesystem/types@0.2.12";

/// The runtime-wide bound on open files, shared by every call.
#[derive(Debug, Clone)]
pub(crate) struct FileSlots(Arc<Semaphore>);

impl Default for FileSlots {
    fn default() -> Self {
        Self(Arc::new(Semaphore::new(MAX_OPEN_FILES_PER_RUNTIME)))
    }
}

/// The files one call holds open, each with its share of the runtime's bound.
#[derive(Debug)]
pub(crate) struct OpenFiles {
    runtime: FileSlots,
    held: Vec<Held>,
    /// The bound that refused an open, if one did: a call that fails after it is
    /// `resource_limit`.
    pub(crate) refused: Option<Bound>,
}

/// Which bound refused an open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    PerCall,
    PerRuntime,
}

impl Bound {
    /// What was limited and its limit, for [`crate::CallError::ResourceLimit`].
    pub(crate) fn describe(self) -> (String, u64) {
        match self {
            Self::PerCall => ("open files and directories of one call".into(), MAX_OPEN_FILES_PER_CALL as u64),
            Self::PerRuntime => (
                "open files and directories of all calls at once (others were holding them)".into(),
                MAX_OPEN_FILES_PER_RUNTIME as u64,
            ),
        }
    }
}

/// One opened file: its descriptor and the streams made from it (each keeps the host's file
/// open after the descriptor is dropped).
#[derive(Debug)]
struct Held {
    descriptor: u32,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    _slot: OwnedSemaphorePermit,
}

impl Held {
    fn is_open(&self, table: &ResourceTable) -> bool {
        table.get(&Resource::<Descriptor>::new_borrow(self.descriptor)).is_ok()
            || self.inputs.iter().any(|&rep| table.get(&Resource::<DynInputStream>::new_borrow(rep)).is_ok())
            || self.outputs.iter().any(|&rep| table.get(&Resource::<DynOutputStream>::new_borrow(rep)).is_ok())
    }
}

impl OpenFiles {
    pub(crate) fn new(runtime: FileSlots) -> Self {
        Self { runtime, held: Vec::new(), refused: None }
    }

    /// A place for one more open file, after forgetting those the tool has closed.
    fn reserve(&mut self, table: &ResourceTable) -> Result<OwnedSemaphorePermit, Bound> {
        self.held.retain(|held| held.is_open(table));
        let bound = if self.held.len() >= MAX_OPEN_FILES_PER_CALL {
            Bound::PerCall
        } else {
            match self.runtime.0.clone().try_acquire_owned() {
                Ok(slot) => return Ok(slot),
                Err(_) => Bound::PerRuntime,
            }
        };
        self.refused = Some(bound);
        Err(bound)
    }

    fn opened(&mut self, descriptor: u32, slot: OwnedSemaphorePermit) {
        self.held.push(Held { descriptor, inputs: Vec::new(), outputs: Vec::new(), _slot: slot });
    }

    /// The file a stream is made from: the newest open under that descriptor's number (the
    /// table reuses the numbers of dropped resources).
    fn held_through(&mut self, descriptor: u32) -> Option<&mut Held> {
        self.held.iter_mut().rev().find(|held| held.descriptor == descriptor)
    }
}

/// Links the counting wrappers over wasmtime-wasi's `open-at` and `*-via-stream`, in place of
/// its own (`linker` must already have `wasi:filesystem`).
pub(crate) fn add_to_linker<T: FilesView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(INTERFACE)?;
    types.func_wrap_async("[method]descriptor.open-at", |store, params: OpenAt| {
        Box::new(async move { Ok((open_at(store, params).await?,)) })
    })?;
    types.func_wrap(
        "[method]descriptor.read-via-stream",
        |mut store, (fd, offset): (Resource<Descriptor>, Filesize)| {
            let rep = fd.rep();
            let stream = HostDescriptor::read_via_stream(&mut store.data_mut().filesystem(), fd, offset);
            let stream = error_code(&mut store, stream)?;
            if let (Ok(stream), Some(held)) = (&stream, store.data_mut().open_files().0.held_through(rep)) {
                held.inputs.push(stream.rep());
            }
            Ok((stream,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.write-via-stream",
        |mut store, (fd, offset): (Resource<Descriptor>, Filesize)| {
            let rep = fd.rep();
            let stream = HostDescriptor::write_via_stream(&mut store.data_mut().filesystem(), fd, offset);
            output_stream(&mut store, rep, stream)
        },
    )?;
    types.func_wrap("[method]descriptor.append-via-stream", |mut store, (fd,): (Resource<Descriptor>,)| {
        let rep = fd.rep();
        let stream = HostDescriptor::append_via_stream(&mut store.data_mut().filesystem(), fd);
        output_stream(&mut store, rep, stream)
    })?;
    linker.allow_shadowing(false);
    Ok(())
}

type OpenAt = (Resource<Descriptor>, PathFlags, String, OpenFlags, DescriptorFlags);

/// `open-at`, if the call and the runtime have room for one more open file.
async fn open_at<T: FilesView>(
    mut store: StoreContextMut<'_, T>,
    (fd, path_flags, path, oflags, flags): OpenAt,
) -> wasmtime::Result<Result<Resource<Descriptor>, ErrorCode>> {
    let sandbox = store.data_mut();
    let (files, table) = sandbox.open_files();
    let slot = match files.reserve(table) {
        Ok(slot) => slot,
        // The closest code WASI has for "too many open files"; the tool sees an error.
        Err(_) => return Ok(Err(ErrorCode::Quota)),
    };
    let opened = HostDescriptor::open_at(&mut sandbox.filesystem(), fd, path_flags, path, oflags, flags).await;
    let opened = error_code(&mut store, opened)?;
    if let Ok(descriptor) = &opened {
        store.data_mut().open_files().0.opened(descriptor.rep(), slot);
    }
    Ok(opened)
}

fn output_stream<T: FilesView>(
    store: &mut StoreContextMut<'_, T>,
    descriptor: u32,
    stream: Result<Resource<DynOutputStream>, FsError>,
) -> wasmtime::Result<(Result<Resource<DynOutputStream>, ErrorCode>,)> {
    let stream = error_code(store, stream)?;
    if let (Ok(stream), Some(held)) = (&stream, store.data_mut().open_files().0.held_through(descriptor)) {
        held.outputs.push(stream.rep());
    }
    Ok((stream,))
}

/// A filesystem result as the guest gets it: an error code, or a trap for a host error, as
/// wasmtime-wasi's own bindings convert it.
fn error_code<T: FilesView, V>(
    store: &mut StoreContextMut<'_, T>,
    result: Result<V, FsError>,
) -> wasmtime::Result<Result<V, ErrorCode>> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(error) => Ok(Err(Host::convert_error_code(&mut store.data_mut().filesystem(), error)?)),
    }
}
