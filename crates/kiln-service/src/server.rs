//! The gRPC face of a [`Service`]: where it listens (a unix socket by default, TCP with a
//! bearer token), the token check (before any handler runs), and the handlers, which run the
//! service's blocking calls on tokio's blocking pool.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use subtle::ConstantTimeEq;
use tokio::net::{TcpListener, UnixListener};
use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tonic::service::Interceptor;
use tonic::{Request, Response, Status};

use crate::error::{RequestError, ServeError, TokenError};
use crate::job::{JobRecord, JobRequest, Priority, from_unix_ms, unix_ms};
use crate::proto::proving_server::{Proving, ProvingServer};
use crate::proto::{
    AwaitRequest, CancelReply, JobRef, JobStatus, MetricsReply, MetricsRequest, ParamsRef, ParamsReply, SubmitReply,
    SubmitRequest,
};
use crate::service::{Service, Shared};

/// A bearer token: what a TCP client must send (`authorization: Bearer <token>`).
#[derive(Clone)]
pub struct Token(Arc<str>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// Longest token accepted.
    pub const MAX_LEN: usize = 1024;
    /// Shortest token accepted.
    pub const MIN_LEN: usize = 16;

    /// The token in `path`: its one line, surrounding whitespace removed. At most
    /// [`Token::MAX_LEN`] + 2 bytes are read.
    ///
    /// # Errors
    /// The file cannot be read, or the token is too short, too long or not printable ASCII.
    pub fn from_file(path: &Path) -> Result<Token, TokenError> {
        use std::io::Read;
        let io = |op| move |source| TokenError::Io { path: path.to_path_buf(), op, source };
        let file = std::fs::File::open(path).map_err(io("open"))?;
        let mut bytes = Vec::new();
        file.take(Token::MAX_LEN as u64 + 2).read_to_end(&mut bytes).map_err(io("read"))?;
        let malformed = || TokenError::Malformed { path: path.to_path_buf() };
        let text = std::str::from_utf8(&bytes).map_err(|_| malformed())?.trim();
        Token::new(text).ok_or_else(malformed)
    }

    /// `text` as a token, if it is [`Token::MIN_LEN`] to [`Token::MAX_LEN`] printable ASCII
    /// characters without spaces.
    pub fn new(text: &str) -> Option<Token> {
        let ok = (Token::MIN_LEN..=Token::MAX_LEN).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| Token(text.into()))
    }

    /// The token's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where the service listens.
#[derive(Debug, Clone)]
pub enum Listen {
    /// A unix socket (the default): reachable only through the file system, mode 0600; no
    /// token.
    Unix(PathBuf),
    /// TCP: every call must carry the bearer token; a wrong or missing one is refused before
    /// any handler runs.
    Tcp {
        /// The address (port 0: any free port, see [`Bound::tcp_addr`]).
        addr: SocketAddr,
        /// The token.
        token: Token,
    },
}

/// A bound listener, ready for [`Service::serve`].
#[derive(Debug)]
pub struct Bound {
    listener: Listener,
}

#[derive(Debug)]
enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener, Token),
}

impl Bound {
    /// The TCP address bound (for `Listen::Tcp` with port 0).
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        match &self.listener {
            Listener::Tcp(l, _) => l.local_addr().ok(),
            Listener::Unix(..) => None,
        }
    }
}

impl Listen {
    /// Binds the socket (async: inside a tokio runtime). A unix socket path left by a dead
    /// server is replaced; one a live server answers on is refused.
    ///
    /// # Errors
    /// The address is in use or cannot be bound.
    pub async fn bind(&self) -> Result<Bound, ServeError> {
        match self {
            Listen::Unix(path) => {
                let err = |op| {
                    let address = path.display().to_string();
                    move |source| ServeError::Listen { address, op, source }
                };
                if let Ok(meta) = std::fs::symlink_metadata(path) {
                    use std::os::unix::fs::FileTypeExt;
                    if !meta.file_type().is_socket() {
                        return Err(ServeError::SocketInUse {
                            path: path.clone(),
                            reason: "exists and is not a socket (choose another --socket path)",
                        });
                    }
                    if tokio::net::UnixStream::connect(path).await.is_ok() {
                        return Err(ServeError::SocketInUse {
                            path: path.clone(),
                            reason: "a server is listening on it (stop it, or choose another --socket path)",
                        });
                    }
                    std::fs::remove_file(path).map_err(err("remove the stale socket"))?;
                }
                let listener = bind_private(path).map_err(err("bind"))?;
                Ok(Bound { listener: Listener::Unix(listener, path.clone()) })
            }
            Listen::Tcp { addr, token } => {
                let listener = TcpListener::bind(addr).await.map_err(|source| ServeError::Listen {
                    address: addr.to_string(),
                    op: "bind",
                    source,
                })?;
                Ok(Bound { listener: Listener::Tcp(listener, token.clone()) })
            }
        }
    }
}

/// Binds a unix socket at `path` that is never reachable by others: it is made in a new
/// folder of mode 0700 next to `path`, set to mode 0600, then renamed into place (a socket
/// bound at `path` directly would exist with the umask's mode until a chmod).
fn bind_private(path: &Path) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let private = parent.join(format!(".kiln-socket-{}-{:016x}", std::process::id(), rand::random::<u64>()));
    std::fs::DirBuilder::new().mode(0o700).create(&private)?;
    let staged = private.join("socket");
    let bound = UnixListener::bind(&staged).and_then(|listener| {
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(&staged, path)?;
        Ok(listener)
    });
    let _ = std::fs::remove_file(&staged);
    let _ = std::fs::remove_dir(&private);
    bound
}

/// Refuses a call without the right bearer token (when one is required), before the handler.
#[derive(Clone)]
struct Auth(Option<Token>);

impl Interceptor for Auth {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(token) = &self.0 else { return Ok(request) };
        let given = request.metadata().get("authorization").map(|v| v.as_bytes()).unwrap_or_default();
        let expected = format!("Bearer {}", token.as_str());
        // Constant time: the comparison must not tell how much of a guess was right.
        if bool::from(given.ct_eq(expected.as_bytes())) {
            Ok(request)
        } else {
            let mut status = Status::unauthenticated(
                "missing or wrong bearer token: send `authorization: Bearer <token>` with the token of the \
                 server's --token-file",
            );
            status.metadata_mut().insert(crate::error::ERROR_KIND_HEADER, "unauthenticated".parse().expect("ASCII"));
            Err(status)
        }
    }
}

impl Service {
    /// Serves gRPC on `bound` until `shutdown` completes (async: inside a tokio runtime with
    /// the multi-threaded scheduler). The workers keep running after it returns; stop them
    /// with [`Service::shutdown`].
    ///
    /// # Errors
    /// The transport failed.
    pub async fn serve(
        &self,
        bound: Bound,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> Result<(), ServeError> {
        let api = Api { shared: self.shared.clone() };
        let router = tonic::transport::Server::builder();
        match bound.listener {
            Listener::Unix(listener, path) => {
                tracing::info!(socket = %path.display(), "serving gRPC on a unix socket");
                let svc = ProvingServer::with_interceptor(api, Auth(None));
                let result = router
                    .clone()
                    .add_service(svc)
                    .serve_with_incoming_shutdown(UnixListenerStream::new(listener), shutdown)
                    .await;
                let _ = std::fs::remove_file(&path);
                Ok(result?)
            }
            Listener::Tcp(listener, token) => {
                tracing::info!(addr = ?listener.local_addr().ok(), "serving gRPC on TCP (bearer token required)");
                let svc = ProvingServer::with_interceptor(api, Auth(Some(token)));
                Ok(router
                    .clone()
                    .add_service(svc)
                    .serve_with_incoming_shutdown(TcpListenerStream::new(listener), shutdown)
                    .await?)
            }
        }
    }
}

/// The gRPC handlers.
struct Api {
    shared: Arc<Shared>,
}

impl Api {
    /// Runs a blocking service call on tokio's blocking pool.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Service) -> Result<T, RequestError> + Send + 'static,
    ) -> Result<T, Status> {
        let shared = self.shared.clone();
        let joined = tokio::task::spawn_blocking(move || {
            // A view of the shared state with no threads of its own: dropping it stops nothing.
            let view = Service::view(shared);
            f(&view)
        })
        .await;
        match joined {
            Ok(result) => result.map_err(Status::from),
            Err(e) => Err(Status::internal(format!("a handler failed: {e}"))),
        }
    }
}

/// A record on the wire.
fn job_status(r: &JobRecord) -> JobStatus {
    let (error_kind, error) = r.error.clone().unwrap_or_default();
    JobStatus {
        job_id: r.id,
        state: r.state.to_wire(),
        priority: r.request.priority.to_wire(),
        circuit: r.request.circuit.clone(),
        params_id: r.request.params_id.clone(),
        proof: r.proof.clone().unwrap_or_default(),
        error_kind,
        error,
        attempts: r.attempts,
        submitted_unix_ms: unix_ms(r.submitted),
        finished_unix_ms: r.finished.map_or(0, unix_ms),
        completion: r.completion.unwrap_or(0),
    }
}

#[tonic::async_trait]
impl Proving for Api {
    async fn submit_proof(&self, request: Request<SubmitRequest>) -> Result<Response<SubmitReply>, Status> {
        let m = request.into_inner();
        let priority = Priority::from_wire(m.priority).ok_or(RequestError::Priority { value: m.priority })?;
        let job = JobRequest {
            circuit: m.circuit,
            witness: m.witness,
            params_id: m.params_id,
            priority,
            deadline: (m.deadline_unix_ms != 0).then(|| from_unix_ms(m.deadline_unix_ms)),
            idempotency_key: (!m.idempotency_key.is_empty()).then_some(m.idempotency_key),
        };
        let accepted = self.blocking(move |s| s.submit(&job)).await?;
        Ok(Response::new(SubmitReply { job_id: accepted.job, created: accepted.created }))
    }

    async fn await_proof(&self, request: Request<AwaitRequest>) -> Result<Response<JobStatus>, Status> {
        let m = request.into_inner();
        let limit = self.shared.config.await_limit;
        let wait = if m.timeout_ms == 0 { limit } else { Duration::from_millis(m.timeout_ms).min(limit) };
        let until = Instant::now() + wait;
        // Subscribed before the first read, so that a result stored in between wakes us.
        let mut finished = self.shared.finished.subscribe();
        loop {
            let id = m.job_id;
            let record = self.blocking(move |s| s.status(id)).await?;
            let now = Instant::now();
            if record.state.is_final() || now >= until {
                return Ok(Response::new(job_status(&record)));
            }
            // Results stored by other hosts of a shared store wake nobody here: poll as well.
            let nap = (until - now).min(self.shared.config.poll);
            let _ = tokio::time::timeout(nap, finished.changed()).await;
        }
    }

    async fn get_status(&self, request: Request<JobRef>) -> Result<Response<JobStatus>, Status> {
        let id = request.into_inner().job_id;
        let record = self.blocking(move |s| s.status(id)).await?;
        Ok(Response::new(job_status(&record)))
    }

    async fn cancel_proof(&self, request: Request<JobRef>) -> Result<Response<CancelReply>, Status> {
        let id = request.into_inner().job_id;
        let (cancelled, record) = self.blocking(move |s| Ok((s.cancel(id)?, s.status(id)?))).await?;
        Ok(Response::new(CancelReply { cancelled, state: record.state.to_wire() }))
    }

    async fn get_metrics(&self, _request: Request<MetricsRequest>) -> Result<Response<MetricsReply>, Status> {
        let text = self.blocking(|s| s.metrics_text()).await?;
        Ok(Response::new(MetricsReply { text }))
    }

    async fn preload_params(&self, request: Request<ParamsRef>) -> Result<Response<ParamsReply>, Status> {
        let id = request.into_inner().id;
        let loaded_id = id.clone();
        self.blocking(move |s| s.preload(&loaded_id)).await?;
        Ok(Response::new(ParamsReply { id, loaded: true }))
    }

    async fn evict_params(&self, request: Request<ParamsRef>) -> Result<Response<ParamsReply>, Status> {
        let id = request.into_inner().id;
        let evicted_id = id.clone();
        self.blocking(move |s| s.evict(&evicted_id)).await?;
        Ok(Response::new(ParamsReply { id, loaded: false }))
    }
}

/// `deadline` as milliseconds since the epoch (0: none), for clients.
pub(crate) fn deadline_ms(deadline: Option<SystemTime>) -> u64 {
    deadline.map_or(0, unix_ms)
}

/// The content type of Prometheus' OpenMetrics text.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

impl Service {
    /// Serves `GET /metrics` (the text of [`Service::metrics_text`]) over plain HTTP/1.1 on
    /// `listener` until `shutdown` completes, for a Prometheus scraper. There is no token on
    /// this endpoint: bind it to an address only the scraper reaches (e.g. 127.0.0.1).
    ///
    /// # Errors
    /// None after the listener is bound: a failed connection is logged and the others go on.
    pub async fn serve_metrics(
        &self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> Result<(), ServeError> {
        tracing::info!(addr = ?listener.local_addr().ok(), "serving GET /metrics over HTTP");
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                _ = &mut shutdown => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::warn!("accepting a metrics connection failed: {e}");
                        continue;
                    }
                },
            };
            let shared = self.shared.clone();
            tokio::spawn(async move {
                let answer = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let shared = shared.clone();
                    async move { Ok::<_, std::convert::Infallible>(metrics_response(shared, &request).await) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                if let Err(e) = hyper::server::conn::http1::Builder::new().serve_connection(io, answer).await {
                    tracing::debug!(%peer, "metrics connection ended: {e}");
                }
            });
        }
    }
}

/// The answer to one HTTP request: the metrics for `GET /metrics`, 404 or 405 otherwise.
async fn metrics_response(
    shared: Arc<Shared>,
    request: &hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<http_body_util::Full<bytes::Bytes>> {
    let reply = |status: u16, content_type: &'static str, body: String| {
        let mut response = hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from(body)));
        *response.status_mut() =
            hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(content_type));
        response
    };
    if request.uri().path() != "/metrics" {
        return reply(404, "text/plain", "not found: the metrics are at /metrics\n".into());
    }
    if request.method() != hyper::Method::GET && request.method() != hyper::Method::HEAD {
        return reply(405, "text/plain", "method not allowed: GET /metrics\n".into());
    }
    let text = tokio::task::spawn_blocking(move || Service::view(shared).metrics_text()).await;
    match text {
        Ok(Ok(text)) => reply(200, OPENMETRICS, text),
        Ok(Err(e)) => reply(500, "text/plain", format!("{e}\n")),
        Err(e) => reply(500, "text/plain", format!("the metrics handler failed: {e}\n")),
    }
}
