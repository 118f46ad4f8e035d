//! A client of the service (what `kiln submit / status / cancel` use): over a unix socket, or
//! TCP with the bearer token.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use hyper_util::rt::TokioIo;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint, Uri};
use tonic::{Request, Status};

use crate::error::ClientError;
use crate::job::{JobId, JobRequest, JobState, Priority, from_unix_ms};
use crate::proto::proving_client::ProvingClient;
use crate::proto::{AwaitRequest, JobRef, MetricsRequest, ParamsRef, SubmitRequest};
use crate::server::{Token, deadline_ms};

/// Adds the bearer token to every call (TCP).
#[derive(Clone)]
struct Bearer(Option<MetadataValue<Ascii>>);

impl Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// Where a service is.
#[derive(Debug, Clone)]
pub enum Address {
    /// Its unix socket.
    Unix(PathBuf),
    /// Its TCP address (`http://host:port`) and the token to send.
    Tcp {
        /// `http://host:port`.
        url: String,
        /// The bearer token.
        token: Token,
    },
}

/// A job's status as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInfo {
    /// The job.
    pub job: JobId,
    /// Where it is.
    pub state: JobState,
    /// Its priority.
    pub priority: Priority,
    /// Its circuit kind.
    pub circuit: String,
    /// Its parameter set.
    pub params_id: String,
    /// The proof (192 bytes, bellperson's format), once done.
    pub proof: Option<Vec<u8>>,
    /// Why it failed: a stable kind and the message.
    pub error: Option<(String, String)>,
    /// Times a worker claimed it.
    pub attempts: u32,
    /// When it was accepted.
    pub submitted: SystemTime,
    /// When it finished.
    pub finished: Option<SystemTime>,
    /// Its place in the order jobs finished (1, 2, ...), once final.
    pub completion: Option<u64>,
}

/// A connection to a service.
#[derive(Debug, Clone)]
pub struct Client {
    inner: ProvingClient<InterceptedService<Channel, Bearer>>,
}

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Bearer(..)" } else { "Bearer(none)" })
    }
}

impl Client {
    /// Connects to `address` (async: inside a tokio runtime).
    ///
    /// # Errors
    /// The address is malformed or nothing answers there.
    pub async fn connect(address: &Address) -> Result<Client, ClientError> {
        match address {
            Address::Unix(path) => Client::connect_unix(path).await,
            Address::Tcp { url, token } => Client::connect_tcp(url, token).await,
        }
    }

    /// Connects over the unix socket at `path`.
    ///
    /// # Errors
    /// Nothing answers there.
    pub async fn connect_unix(path: &Path) -> Result<Client, ClientError> {
        let shown = path.display().to_string();
        // The URI is required by the transport and unused: the connector ignores it.
        let endpoint = Endpoint::from_static("http://localhost");
        let path = path.to_path_buf();
        let channel = endpoint
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let path = path.clone();
                async move { Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(path).await?)) }
            }))
            .await
            .map_err(|source| ClientError::Connect { address: shown, source })?;
        Ok(Client { inner: ProvingClient::with_interceptor(channel, Bearer(None)) })
    }

    /// Connects over TCP to `url` (`http://host:port`), sending `token` with every call.
    ///
    /// # Errors
    /// The URL is malformed or nothing answers there.
    pub async fn connect_tcp(url: &str, token: &Token) -> Result<Client, ClientError> {
        let address = |reason: String| ClientError::Address { address: url.to_string(), reason };
        let endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| address(e.to_string()))?;
        let value = format!("Bearer {}", token.as_str())
            .parse::<MetadataValue<Ascii>>()
            .map_err(|e| address(format!("the token cannot be sent: {e}")))?;
        let channel =
            endpoint.connect().await.map_err(|source| ClientError::Connect { address: url.to_string(), source })?;
        Ok(Client { inner: ProvingClient::with_interceptor(channel, Bearer(Some(value))) })
    }

    /// Submits a job; returns its id and whether it is new (false: its idempotency key named
    /// a job submitted before).
    ///
    /// # Errors
    /// [`ClientError::Busy`] (retry after its `retry_after`), [`ClientError::Refused`] with
    /// the refusal's kind, or a transport failure.
    pub async fn submit(&mut self, job: &JobRequest) -> Result<(JobId, bool), ClientError> {
        let request = SubmitRequest {
            circuit: job.circuit.clone(),
            witness: job.witness.clone(),
            params_id: job.params_id.clone(),
            priority: job.priority.to_wire(),
            deadline_unix_ms: deadline_ms(job.deadline),
            idempotency_key: job.idempotency_key.clone().unwrap_or_default(),
        };
        let reply = self.inner.submit_proof(request).await?.into_inner();
        Ok((reply.job_id, reply.created))
    }

    /// The job's status now.
    ///
    /// # Errors
    /// Unknown job, or a transport failure.
    pub async fn status(&mut self, job: JobId) -> Result<JobInfo, ClientError> {
        info(self.inner.get_status(JobRef { job_id: job }).await?.into_inner())
    }

    /// The job's status once it is final, or after `timeout` (capped by the server).
    ///
    /// # Errors
    /// Unknown job, or a transport failure.
    pub async fn await_job(&mut self, job: JobId, timeout: Duration) -> Result<JobInfo, ClientError> {
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).max(1);
        info(self.inner.await_proof(AwaitRequest { job_id: job, timeout_ms }).await?.into_inner())
    }

    /// Waits until the job is final, however long it takes (one `AwaitProof` call after
    /// another).
    ///
    /// # Errors
    /// Unknown job, or a transport failure.
    pub async fn wait(&mut self, job: JobId) -> Result<JobInfo, ClientError> {
        loop {
            let status = self.await_job(job, Duration::from_secs(60)).await?;
            if status.state.is_final() {
                return Ok(status);
            }
        }
    }

    /// Cancels a queued job; returns whether it was cancelled and its state now.
    ///
    /// # Errors
    /// Unknown job, or a transport failure.
    pub async fn cancel(&mut self, job: JobId) -> Result<(bool, JobState), ClientError> {
        let reply = self.inner.cancel_proof(JobRef { job_id: job }).await?.into_inner();
        let state =
            JobState::from_wire(reply.state).ok_or(ClientError::Unreadable { field: "state", value: reply.state })?;
        Ok((reply.cancelled, state))
    }

    /// The service's metrics (Prometheus text).
    ///
    /// # Errors
    /// A transport failure, or the store failed.
    pub async fn metrics(&mut self) -> Result<String, ClientError> {
        Ok(self.inner.get_metrics(MetricsRequest {}).await?.into_inner().text)
    }

    /// Loads parameter set `id` now.
    ///
    /// # Errors
    /// Unknown id ([`crate::ErrorKind::UnknownParams`]) or it cannot be loaded ([`crate::ErrorKind::Params`]).
    pub async fn preload(&mut self, id: &str) -> Result<(), ClientError> {
        self.inner.preload_params(ParamsRef { id: id.to_string() }).await?;
        Ok(())
    }

    /// Drops the loaded parameter set `id`.
    ///
    /// # Errors
    /// Unknown id ([`crate::ErrorKind::UnknownParams`]).
    pub async fn evict(&mut self, id: &str) -> Result<(), ClientError> {
        self.inner.evict_params(ParamsRef { id: id.to_string() }).await?;
        Ok(())
    }
}

fn info(s: crate::proto::JobStatus) -> Result<JobInfo, ClientError> {
    let state = JobState::from_wire(s.state).ok_or(ClientError::Unreadable { field: "state", value: s.state })?;
    let priority =
        Priority::from_wire(s.priority).ok_or(ClientError::Unreadable { field: "priority", value: s.priority })?;
    Ok(JobInfo {
        job: s.job_id,
        state,
        priority,
        circuit: s.circuit,
        params_id: s.params_id,
        proof: (!s.proof.is_empty()).then_some(s.proof),
        error: (!s.error_kind.is_empty()).then_some((s.error_kind, s.error)),
        attempts: s.attempts,
        submitted: from_unix_ms(s.submitted_unix_ms),
        finished: (s.finished_unix_ms != 0).then(|| from_unix_ms(s.finished_unix_ms)),
        completion: (s.completion != 0).then_some(s.completion),
    })
}
