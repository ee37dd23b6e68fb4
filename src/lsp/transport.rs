//! LSP base protocol on stdio, in front of tower-lsp-server.
//!
//! tower-lsp-server's own framed reader stops reading after the first frame
//! it cannot decode, so one bad message would end the process. Here we read
//! frames ourselves (header names case-insensitive, resynchronising on the
//! next `Content-Length` after a wrong length, bounded sizes), answer what
//! tower-lsp-server would refuse, and hand it only messages it accepts,
//! re-framed, through an in-memory pipe. Everything bound for stdout, its
//! output and our error responses, goes through one writer task, so frames
//! never interleave.
//!
//! The framing itself is in [`frames`]; what may wait for a client that
//! does not read, in [`backlog`].

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tower_lsp_server::jsonrpc::{Id, Request, Response};
use tower_lsp_server::{ClientSocket, LanguageServer, LspService, Server};

pub(crate) use self::backlog::Backlog;
use self::frames::{Frame, Frames};

mod backlog;
mod frames;

/// Largest message body accepted.
const MAX_BODY: usize = 64 << 20;
/// Largest header block; a longer one is not a header.
const MAX_HEADER: usize = 8 << 10;
const HEADER: &[u8] = b"content-length";
/// Frames in flight between tasks; the pipes add 64 KiB each.
const QUEUE: usize = 64;
const PIPE: usize = 64 << 10;
/// A body stalled this long may have had a wrong Content-Length.
const IDLE: Duration = Duration::from_millis(500);
/// How long output may take to drain once the server has stopped.
const FLUSH: Duration = Duration::from_secs(2);
/// How long a client has to answer a request ask-lsp cancelled, before it
/// is answered for it: tower-lsp-server keeps every request it sent until
/// a response comes, so a client that ignores cancelled ones would make
/// that memory grow for as long as it runs.
const CANCELLED_GRACE: Duration = Duration::from_secs(30);

/// How serving ended: the process exit code and, when not a clean stop,
/// why (for stderr).
#[derive(Debug)]
pub struct Stopped {
    pub code: u8,
    pub reason: Option<String>,
}

/// State the reading and forwarding halves share.
#[derive(Default)]
struct Shared {
    /// The client sent `shutdown`: nothing new may be asked of it.
    shutdown_asked: AtomicBool,
    shutdown_id: Mutex<Option<Id>>,
    /// `shutdown` was answered with success, so `exit` is a clean stop.
    shut_down: AtomicBool,
    /// The request whose response releases further input.
    awaited: Mutex<Option<(Id, oneshot::Sender<()>)>>,
    /// Requests to the client that we cancelled and it has not answered.
    cancelled: Mutex<HashSet<Id>>,
    cancelled_grace: Duration,
}

/// Where frames for the client go.
pub(super) trait Output: Send + 'static {
    /// Writes each body as one frame until every sender is gone, telling
    /// `backlog` what it wrote.
    fn spawn(
        self,
        bodies: mpsc::Receiver<Vec<u8>>,
        backlog: Arc<Backlog>,
    ) -> JoinHandle<std::io::Result<()>>;
}

impl<O: AsyncWrite + Unpin + Send + 'static> Output for O {
    fn spawn(
        self,
        bodies: mpsc::Receiver<Vec<u8>>,
        backlog: Arc<Backlog>,
    ) -> JoinHandle<std::io::Result<()>> {
        tokio::spawn(write_frames(self, bodies, backlog))
    }
}

/// The process's stdout, written by a thread of its own: a frame costs one
/// wake-up of that thread, where tokio's `Stdout` hands every write to the
/// blocking pool and waits for it to come back; and a client slow to read
/// blocks that thread, never the runtime.
pub(super) struct Stdout;

impl Output for Stdout {
    fn spawn(
        self,
        mut bodies: mpsc::Receiver<Vec<u8>>,
        backlog: Arc<Backlog>,
    ) -> JoinHandle<std::io::Result<()>> {
        tokio::task::spawn_blocking(move || {
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            let mut frames = Vec::new();
            while let Some(body) = bodies.blocking_recv() {
                // What queued up meanwhile goes out in the same write.
                let mut next = Some(body);
                let mut written = 0;
                while let Some(body) = next {
                    push_frame(&mut frames, &body);
                    written += body.len();
                    next = bodies.try_recv().ok();
                }
                stdout.write_all(&frames)?;
                stdout.flush()?;
                backlog.written(written);
                frames.clear();
                frames.shrink_to(PIPE);
            }
            Ok(())
        })
    }
}

/// Serves `service` over `input`/`output` until `exit` or the end of input;
/// `backlog` is shared with the presenter.
pub(super) async fn serve<S, I>(
    input: I,
    output: impl Output,
    service: LspService<S>,
    socket: ClientSocket,
    backlog: Arc<Backlog>,
) -> Stopped
where
    S: LanguageServer,
    I: AsyncRead + Unpin + Send + 'static,
{
    let shared = Arc::new(Shared {
        cancelled_grace: crate::app::environment()
            .cancelled_grace
            .unwrap_or(CANCELLED_GRACE),
        ..Shared::default()
    });
    let (out_tx, out_rx) = mpsc::channel(QUEUE);
    let mut writer = output.spawn(out_rx, backlog.clone());
    let out_tx = ToClient {
        frames: out_tx,
        backlog,
    };
    let (in_tx, in_rx) = mpsc::channel(QUEUE);
    let (to_server, server_in) = tokio::io::duplex(PIPE);
    let (server_out, from_server) = tokio::io::duplex(PIPE);
    tokio::spawn(feed_server(to_server, in_rx));
    let forwarder = tokio::spawn(forward(
        from_server,
        out_tx.clone(),
        in_tx.downgrade(),
        shared.clone(),
    ));
    let reader = tokio::spawn(read_client(input, in_tx, out_tx, shared.clone()));
    let server = Server::new(server_in, server_out, socket).serve(service);
    tokio::select! {
        () = server => {}
        written = &mut writer => return match written {
            Ok(Err(e)) => output_failed(e),
            _ => failed("the stdout writer stopped".into()),
        },
    }
    // The server stops only once our reader has stopped feeding it.
    let ended = tokio::time::timeout(FLUSH, reader).await;
    let _ = tokio::time::timeout(FLUSH, forwarder).await;
    if let Ok(Ok(Err(e))) = tokio::time::timeout(FLUSH, writer).await
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return output_failed(e);
    }
    let shut_down = shared.shut_down.load(Ordering::SeqCst);
    match ended {
        Ok(Ok(Ended::Exit | Ended::Eof { .. })) if shut_down => Stopped {
            code: 0,
            reason: None,
        },
        // LSP: exit without a shutdown before it is exit code 1.
        Ok(Ok(Ended::Exit)) => failed("`exit` without `shutdown` first".into()),
        // The client is gone; nobody is left to be told otherwise, and
        // clients that stop servers by closing stdin expect status 0.
        Ok(Ok(Ended::Eof { partial })) => Stopped {
            code: 0,
            reason: Some(format!(
                "the client closed stdin{} without `shutdown`; stopping",
                if partial {
                    " in the middle of a message"
                } else {
                    ""
                }
            )),
        },
        Ok(Ok(Ended::ReadError(e))) => failed(format!("cannot read stdin: {e}")),
        // The writer stopped on a closed stdout (any other error returned above).
        Ok(Ok(Ended::OutputClosed)) => Stopped {
            code: 0,
            reason: Some("the client closed stdout; stopping".into()),
        },
        Ok(Ok(Ended::ServerStopped)) => failed("the LSP server stopped reading".into()),
        _ => failed("the stdin reader stopped".into()),
    }
}

/// A closed stdout is a client gone, like a closed stdin; anything else
/// is a failure.
fn output_failed(e: std::io::Error) -> Stopped {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Stopped {
            code: 0,
            reason: Some("the client closed stdout; stopping".into()),
        }
    } else {
        failed(format!("cannot write to stdout: {e}"))
    }
}

fn failed(reason: String) -> Stopped {
    Stopped {
        code: 1,
        reason: Some(reason),
    }
}

/// Writes each body as one frame.
async fn write_frames(
    mut output: impl AsyncWrite + Unpin,
    mut bodies: mpsc::Receiver<Vec<u8>>,
    backlog: Arc<Backlog>,
) -> std::io::Result<()> {
    let mut frame = Vec::new();
    while let Some(body) = bodies.recv().await {
        push_frame(&mut frame, &body);
        output.write_all(&frame).await?;
        output.flush().await?;
        backlog.written(body.len());
        frame.clear();
    }
    Ok(())
}

/// The writer's queue, bounded in bytes as well as in frames.
#[derive(Clone)]
struct ToClient {
    frames: mpsc::Sender<Vec<u8>>,
    backlog: Arc<Backlog>,
}

impl ToClient {
    async fn send(&self, body: Vec<u8>) -> Result<(), mpsc::error::SendError<Vec<u8>>> {
        self.backlog.queue_bytes(body.len()).await;
        let len = body.len();
        let sent = self.frames.send(body).await;
        if sent.is_err() {
            self.backlog.written(len);
        }
        sent
    }
}

fn push_frame(frames: &mut Vec<u8>, body: &[u8]) {
    use std::io::Write as _;
    let _ = write!(frames, "Content-Length: {}\r\n\r\n", body.len());
    frames.extend_from_slice(body);
}

/// Writes each body as one frame into tower-lsp-server's input; when every
/// sender is gone, the pipe closes and the server sees the end of input.
async fn feed_server(mut pipe: DuplexStream, mut bodies: mpsc::Receiver<Vec<u8>>) {
    while let Some(body) = bodies.recv().await {
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        if pipe.write_all(header.as_bytes()).await.is_err() || pipe.write_all(&body).await.is_err()
        {
            return;
        }
    }
}

enum Ended {
    Exit,
    Eof { partial: bool },
    ReadError(std::io::Error),
    OutputClosed,
    ServerStopped,
}

/// Reads the client's frames, answers the malformed ones and passes the
/// others on, until `exit` or the end of input.
async fn read_client(
    input: impl AsyncRead + Unpin,
    to_server: mpsc::Sender<Vec<u8>>,
    to_client: ToClient,
    shared: Arc<Shared>,
) -> Ended {
    let mut frames = Frames::client(input);
    loop {
        let frame = frames.next().await;
        if frames.skipped > 0 {
            tracing::warn!(
                bytes = frames.skipped,
                "skipped stdin bytes that are not an LSP message"
            );
            frames.skipped = 0;
        }
        let (refusal, refused_body) = match frame {
            Ok(Frame::Body(body)) => match check(&body) {
                Ok(message) => match pass(message, body, &to_server, &shared).await {
                    Some(ended) => return ended,
                    None => continue,
                },
                Err(refusal) => (refusal, Some(body)),
            },
            Ok(Frame::TooLarge(length)) => (
                Refusal {
                    parse: false,
                    id: Id::Null,
                    reason: format!(
                        "a message of {length} bytes is over the {} MiB limit",
                        MAX_BODY >> 20
                    ),
                },
                None,
            ),
            Ok(Frame::Short { length, got }) => (
                Refusal {
                    parse: true,
                    id: Id::Null,
                    reason: format!(
                        "Content-Length is {length} but the message ended after {got} bytes"
                    ),
                },
                None,
            ),
            Ok(Frame::End { partial }) => return Ended::Eof { partial },
            Err(e) => return Ended::ReadError(e),
        };
        if reply(&to_client, &refusal).await.is_err() {
            return Ended::OutputClosed;
        }
        if let Some(body) = refused_body.filter(|_| refusal.parse) {
            // The length may be what was wrong: look for the next header
            // from the start of this body, not its end.
            frames.rewind(body);
        }
    }
}

/// Hands a valid message to the server; `Some` when reading must stop.
async fn pass(
    message: Message,
    body: Vec<u8>,
    to_server: &mpsc::Sender<Vec<u8>>,
    shared: &Shared,
) -> Option<Ended> {
    let request = match message {
        Message::Request(request) => request,
        Message::Response(id) => {
            shared.cancelled.lock().expect("not poisoned").remove(&id);
            return to_server
                .send(body)
                .await
                .err()
                .map(|_| Ended::ServerStopped);
        }
    };
    // tower-lsp-server drops notifications (`initialized`!) and refuses
    // requests that arrive before its `initialize` response is out, and
    // cancels a pending `shutdown` on `exit`: hold what follows these two
    // until they are answered, whatever order the client sends them in.
    let mut released = None;
    if let (method @ ("initialize" | "shutdown"), Some(id)) = (request.method(), request.id()) {
        if method == "shutdown" {
            shared.shutdown_asked.store(true, Ordering::SeqCst);
            *shared.shutdown_id.lock().expect("not poisoned") = Some(id.clone());
        }
        let (tx, rx) = oneshot::channel();
        *shared.awaited.lock().expect("not poisoned") = Some((id.clone(), tx));
        released = Some(rx);
    }
    if to_server.send(body).await.is_err() {
        return Some(Ended::ServerStopped);
    }
    if request.method() == "exit" {
        // The server stops reading after `exit`; so do we.
        return Some(Ended::Exit);
    }
    if let Some(released) = released {
        let _ = released.await;
    }
    None
}

async fn reply(
    to_client: &ToClient,
    refusal: &Refusal,
) -> Result<(), mpsc::error::SendError<Vec<u8>>> {
    let (code, kind) = if refusal.parse {
        (-32700, "Parse error")
    } else {
        (-32600, "Invalid request")
    };
    tracing::warn!(code, "answered a malformed LSP message: {}", refusal.reason);
    let response = json!({
        "jsonrpc": "2.0",
        "id": refusal.id,
        "error": {"code": code, "message": format!("{kind}: {}", refusal.reason)},
    });
    to_client.send(response.to_string().into_bytes()).await
}

/// What tower-lsp-server's output tells us about the protocol's state.
#[derive(Deserialize)]
struct Peek {
    method: Option<String>,
    id: Option<Id>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct CancelPeek {
    params: CancelId,
}

#[derive(Deserialize)]
struct CancelId {
    id: Id,
}

/// Passes tower-lsp-server's frames on to the writer, noting the answers the
/// reader awaits and the one to `shutdown`, and keeping requests from a
/// client that asked to shut down.
async fn forward(
    from_server: DuplexStream,
    to_client: ToClient,
    to_server: mpsc::WeakSender<Vec<u8>>,
    shared: Arc<Shared>,
) {
    let mut frames = Frames::server(from_server);
    while let Ok(Frame::Body(body)) = frames.next().await {
        let Ok(peek) = serde_json::from_slice::<Peek>(&body) else {
            tracing::error!("tower-lsp-server wrote a message that is not JSON-RPC");
            continue;
        };
        let is_request = peek.method.is_some();
        if is_request {
            to_client.backlog.taken();
        }
        if is_request
            && shared.shutdown_asked.load(Ordering::SeqCst)
            && let Some(id) = peek.id
        {
            refuse_after_shutdown(id, &to_server);
            continue;
        }
        if peek.method.as_deref() == Some("$/cancelRequest")
            && let Ok(cancel) = serde_json::from_slice::<CancelPeek>(&body)
        {
            release_if_unanswered(cancel.params.id, &to_server, &shared);
        }
        if to_client.send(body).await.is_err() {
            return;
        }
        let (false, Some(id)) = (is_request, peek.id) else {
            continue;
        };
        if shared.shutdown_id.lock().expect("not poisoned").as_ref() == Some(&id)
            && peek.error.is_none()
        {
            shared.shut_down.store(true, Ordering::SeqCst);
        }
        let mut awaited = shared.awaited.lock().expect("not poisoned");
        if awaited.as_ref().is_some_and(|(awaited, _)| *awaited == id) {
            let (_, release) = awaited.take().expect("checked");
            let _ = release.send(());
        }
    }
}

/// Answers a cancelled request for a client that does not, once it has had
/// [`CANCELLED_GRACE`] to: tower-lsp-server then lets the request go.
fn release_if_unanswered(id: Id, to_server: &mpsc::WeakSender<Vec<u8>>, shared: &Arc<Shared>) {
    shared
        .cancelled
        .lock()
        .expect("not poisoned")
        .insert(id.clone());
    let (to_server, shared) = (to_server.clone(), shared.clone());
    tokio::spawn(async move {
        tokio::time::sleep(shared.cancelled_grace).await;
        if !shared.cancelled.lock().expect("not poisoned").remove(&id) {
            return; // answered meanwhile
        }
        let Some(to_server) = to_server.upgrade() else {
            return;
        };
        tracing::debug!(%id, "released a cancelled request the client never answered");
        let response = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32800, "message": "cancelled, and not answered by the client"},
        });
        let _ = to_server.send(response.to_string().into_bytes()).await;
    });
}

/// Answers a request the server tried to send after `shutdown` as if the
/// client had refused it, so whoever awaits it moves on.
fn refuse_after_shutdown(id: Id, to_server: &mpsc::WeakSender<Vec<u8>>) {
    tracing::debug!(%id, "not sending a request to the client after shutdown");
    let Some(to_server) = to_server.upgrade() else {
        return;
    };
    let response = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32803, "message": "not sent: the client asked to shut down"},
    });
    // Not awaited here: the server may be blocked writing to us.
    tokio::spawn(async move {
        let _ = to_server.send(response.to_string().into_bytes()).await;
    });
}

enum Message {
    Request(Request),
    Response(Id),
}

/// Why a body was refused, in words that quote none of it.
struct Refusal {
    /// A parse error (-32700: not JSON, or framed wrong) rather than an
    /// invalid request (-32600: JSON, but not a JSON-RPC message).
    parse: bool,
    id: Id,
    reason: String,
}

/// Accepts exactly what tower-lsp-server decodes: a JSON-RPC 2.0 request,
/// notification or response, as UTF-8 JSON.
fn check(body: &[u8]) -> Result<Message, Refusal> {
    let parse_error = |reason: String| Refusal {
        parse: true,
        id: Id::Null,
        reason,
    };
    if body.is_empty() {
        return Err(parse_error("empty message".into()));
    }
    let text = std::str::from_utf8(body).map_err(|_| parse_error("not UTF-8".into()))?;
    // serde_json's syntax errors give a position, never the text.
    let value: Value = serde_json::from_str(text).map_err(|e| parse_error(e.to_string()))?;
    // First: a response also decodes as a `Request` (its `method` defaults).
    if let Ok(response) = Response::deserialize(&value) {
        return Ok(Message::Response(response.id().clone()));
    }
    if let Ok(request) = Request::deserialize(&value) {
        return Ok(Message::Request(request));
    }
    let id = value
        .get("id")
        .and_then(|id| Id::deserialize(id).ok())
        .unwrap_or(Id::Null);
    let reason = match &value {
        Value::Array(_) => "batches are not supported",
        Value::Object(object) => match object.get("jsonrpc") {
            Some(Value::String(version)) if version == "2.0" => {
                match (object.get("id"), object.get("method")) {
                    (Some(id), _) if Id::deserialize(id).is_err() => {
                        "\"id\" must be an integer, a string or null"
                    }
                    (_, Some(method)) if !method.is_string() => "\"method\" must be a string",
                    _ => "not a request, notification or response",
                }
            }
            _ => "\"jsonrpc\" must be \"2.0\"",
        },
        _ => "a message must be a JSON object",
    };
    Err(Refusal {
        parse: false,
        id,
        reason: reason.into(),
    })
}

#[cfg(test)]
mod tests;
