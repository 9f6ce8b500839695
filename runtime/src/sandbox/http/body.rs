//! A response body held to the tool's cap, keeping its request's in-flight slot until it
//! is read to the end or dropped.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use wasmtime_wasi_http::{Error, WasiBody};

use super::HttpEvents;

/// A body that fails once more than `limit` bytes have come through.
pub(super) struct CappedBody<Slot> {
    inner: WasiBody,
    remaining: u64,
    limit: u64,
    events: Arc<HttpEvents>,
    _slot: Slot,
}

impl<Slot: Send + Unpin + 'static> CappedBody<Slot> {
    pub(super) fn new(inner: WasiBody, limit: u64, events: Arc<HttpEvents>, slot: Slot) -> Self {
        Self { inner, remaining: limit, limit, events, _slot: slot }
    }

    pub(super) fn boxed(self) -> WasiBody {
        BodyExt::boxed_unsync(self)
    }
}

impl<Slot: Unpin> Body for CappedBody<Slot> {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(frame)) = &frame
            && let Some(data) = frame.data_ref()
        {
            let size = data.len() as u64;
            if size > self.remaining {
                self.remaining = 0;
                self.events.response_capped.store(true, Ordering::Relaxed);
                return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(self.limit)))));
            }
            self.remaining -= size;
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::Full;

    use super::*;

    fn body(bytes: usize, limit: u64, events: &Arc<HttpEvents>) -> CappedBody<()> {
        let inner = Full::new(Bytes::from(vec![b'x'; bytes])).map_err(|never| match never {}).boxed_unsync();
        CappedBody::new(inner, limit, events.clone(), ())
    }

    #[tokio::test]
    async fn bodies_past_the_cap_fail_and_say_so() {
        let events = Arc::new(HttpEvents::default());
        let err = body(101, 100, &events).collect().await.expect_err("over the cap");
        assert!(matches!(err, Error::HttpResponseBodySize(Some(100))), "{err:?}");
        assert!(events.response_capped());

        let events = Arc::new(HttpEvents::default());
        assert_eq!(body(100, 100, &events).collect().await.expect("within the cap").to_bytes().len(), 100);
        assert!(!events.response_capped());
    }
}
