//! Serving MCP over streamable HTTP (`serve --http ADDR:PORT`): rmcp's
//! server transport at `/mcp`, `/healthz` for load balancers, bearer tokens,
//! session IDs a load balancer can route by (`GEOMAP_REPLICA_ID`), and the
//! listener's graceful stop.
//!
//! Invariants: every `/mcp` request passes the token check first when tokens
//! are configured (a refusal is a bare 401 with `WWW-Authenticate: Bearer`);
//! a token is compared in constant time as a SHA-256 digest and never logged;
//! `Host` and `Origin` are checked by rmcp against loopback plus
//! `GEOMAP_HTTP_ALLOWED_HOSTS`; `/healthz` never touches the registry; a
//! 2025-11-25 session's ID starts with `<replica>.` when the replica is named,
//! so every request of a session reaches the replica that holds it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, create_local_session};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::mcp::calls::{InFlight, OwnedInFlightGuard};
use crate::mcp::{Connection, GeomapServer};
use geomap_model::settings::Settings;

/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";
/// The health check's path.
pub const HEALTH_PATH: &str = "/healthz";
/// The largest request body accepted, in bytes: tool arguments are small (maps travel as paths).
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// At shutdown, how long responses still streaming get to end once no call runs.
pub const FLUSH: std::time::Duration = std::time::Duration::from_secs(5);

/// Why the HTTP server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The settings do not allow serving on this address.
    #[error("{0}")]
    Refused(String),
    /// The tokens file cannot be used.
    #[error("GEOMAP_HTTP_TOKENS_FILE={}: {reason}", path.display())]
    Tokens { path: std::path::PathBuf, reason: String },
    /// The address cannot be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind { address: SocketAddr, source: std::io::Error },
}

/// The accepted bearer tokens, kept as SHA-256 digests only.
pub struct Tokens {
    digests: Vec<[u8; 32]>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens({} redacted)", self.digests.len())
    }
}

impl Tokens {
    /// Reads one token per line; blank lines and lines starting with `#` are skipped.
    pub fn read(path: &Path) -> Result<Tokens, HttpError> {
        let fail = |reason: String| HttpError::Tokens { path: path.to_owned(), reason };
        let text = std::fs::read_to_string(path).map_err(|error| fail(format!("cannot be read ({error})")))?;
        Tokens::parse(&text).map_err(fail)
    }

    /// The tokens in `text`, one per line.
    pub fn parse(text: &str) -> Result<Tokens, String> {
        let tokens: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')).collect();
        if tokens.is_empty() {
            return Err("holds no token: write one per line".to_owned());
        }
        if let Some(short) = tokens.iter().position(|token| token.len() < 16) {
            return Err(format!("the token on non-blank line {} is shorter than 16 characters; use long random tokens", short + 1));
        }
        if tokens.iter().any(|token| !token.chars().all(|c| c.is_ascii_graphic())) {
            return Err("a token holds a character that cannot travel in an Authorization header".to_owned());
        }
        Ok(Tokens { digests: tokens.iter().map(|token| digest(token)).collect() })
    }

    /// Whether `presented` is one of the tokens: every digest is compared, in constant time.
    pub fn accepts(&self, presented: &str) -> bool {
        let presented = digest(presented);
        let matches = |known: &[u8; 32]| known.iter().zip(presented).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0;
        self.digests.iter().fold(false, |found, known| found | matches(known))
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// What the HTTP server is told at start.
pub struct HttpServer {
    address: SocketAddr,
    tokens: Option<Arc<Tokens>>,
    allowed_hosts: Vec<String>,
    replica: Option<String>,
}

impl HttpServer {
    /// Checks the settings: an address off loopback needs tokens, and the tokens file must hold some.
    pub fn configure(settings: &Settings) -> Result<HttpServer, HttpError> {
        let address = settings.http_listen.ok_or_else(|| HttpError::Refused("no HTTP address is set".to_owned()))?;
        if let Some(problem) = settings.http_problem() {
            return Err(HttpError::Refused(problem));
        }
        let tokens = settings.http_tokens_file.as_deref().map(Tokens::read).transpose()?.map(Arc::new);
        let mut allowed_hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"].map(str::to_owned).to_vec();
        if !address.ip().is_unspecified() {
            allowed_hosts.push(address.ip().to_string());
        }
        allowed_hosts.extend(settings.http_allowed_hosts.iter().cloned());
        Ok(HttpServer { address, tokens, allowed_hosts, replica: settings.replica_id.clone() })
    }

    /// Who may connect, in a line for `check`: the tokens (counted, never shown) and the host names.
    pub fn describe_access(&self) -> String {
        let tokens = match &self.tokens {
            Some(tokens) => format!("{} bearer token(s) required", tokens.digests.len()),
            None => "no token (loopback only)".to_owned(),
        };
        format!("{tokens}; Host and Origin allowed: {}", self.allowed_hosts.join(", "))
    }

    /// Serves `server` until `stop` is cancelled, then stops accepting. Once `drained` is cancelled
    /// (the caller does that when calls in flight are done or the grace is over), the responses still
    /// streaming get up to [`FLUSH`] to end; then every MCP session is closed and it returns.
    pub async fn serve(self, server: GeomapServer, stop: CancellationToken, drained: CancellationToken) -> Result<(), HttpError> {
        let listener = tokio::net::TcpListener::bind(self.address).await.map_err(|source| HttpError::Bind { address: self.address, source })?;
        let bound = listener.local_addr().map_err(|source| HttpError::Bind { address: self.address, source })?;
        let origins: Vec<String> = self.allowed_hosts.iter().flat_map(|host| origin_patterns(host)).collect();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(self.allowed_hosts.clone())
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_max_request_body_bytes(MAX_BODY_BYTES);
        let responses = Arc::new(InFlight::default());
        let session_manager = Arc::new(Sessions { replica: self.replica.clone(), local: LocalSessionManager::default() });
        let mcp = StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&session_manager), config);
        tracing::info!(event = %"http_listen", address = %bound, mcp = %MCP_PATH, tokens = self.tokens.is_some());
        let next_connection = AtomicU64::new(1);
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = stop.cancelled() => break,
            };
            let (stream, _) = match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!("an HTTP connection could not be accepted: {error}");
                    continue;
                }
            };
            // A response goes out as several small writes (headers, then each event of the stream): without
            // TCP_NODELAY, Nagle's algorithm holds the later ones until the client's delayed ACK, ~40 ms a call.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!("TCP_NODELAY could not be set on an HTTP connection: {error}");
            }
            let connection = Connection(format!("c{}", next_connection.fetch_add(1, Ordering::Relaxed)));
            let (mcp, tokens, responses) = (mcp.clone(), self.tokens.clone(), Arc::clone(&responses));
            let service = hyper::service::service_fn(move |request| route(request, mcp.clone(), tokens.clone(), connection.clone(), Arc::clone(&responses)));
            let served = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::spawn(async move {
                if let Err(error) = served.await {
                    tracing::debug!("an HTTP connection ended: {error}");
                }
            });
        }
        drop(listener);
        tracing::info!(event = %"http_stop", "no longer accepting connections");
        drained.cancelled().await;
        let _ = tokio::time::timeout(FLUSH, responses.idle()).await;
        // Each session is closed, not dropped: a session whose manager goes away first ends in rmcp's ERROR line.
        let open: Vec<_> = session_manager.local.sessions.read().await.keys().cloned().collect();
        for id in open {
            let _ = tokio::time::timeout(FLUSH, session_manager.close_session(&id)).await;
        }
        Ok(())
    }
}

/// The sessions of 2025-11-25 clients: rmcp's, in this process, each ID `<replica>.<random>` when
/// the replica is named (`GEOMAP_REPLICA_ID`), so a load balancer sends every request of a session
/// to the replica that holds it (README's nginx configuration maps the prefix to the replica).
pub struct Sessions {
    replica: Option<String>,
    local: LocalSessionManager,
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let random = geomap_model::random_hex(16);
        let id: SessionId = match &self.replica {
            Some(replica) => format!("{replica}.{random}").into(),
            None => random.into(),
        };
        let (handle, worker) = create_local_session(id.clone(), self.local.session_config.clone());
        self.local.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(&self, id: &SessionId) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }
}

/// `http://host:*` and `https://host:*` for a bare host; the authority as given with a port.
fn origin_patterns(host: &str) -> Vec<String> {
    let authority = match host.parse::<std::net::Ipv6Addr>() {
        Ok(_) => format!("[{host}]:*"),
        Err(_) if host.ends_with(']') || !host.contains(':') => format!("{host}:*"),
        Err(_) => host.to_owned(),
    };
    vec![format!("http://{authority}"), format!("https://{authority}")]
}

type Body = BoxBody<Bytes, Infallible>;

async fn route(
    mut request: Request<Incoming>,
    mut mcp: StreamableHttpService<GeomapServer, Sessions>,
    tokens: Option<Arc<Tokens>>,
    connection: Connection,
    responses: Arc<InFlight>,
) -> Result<Response<Body>, Infallible> {
    match request.uri().path() {
        HEALTH_PATH => Ok(plain(StatusCode::OK, "ok\n")),
        MCP_PATH => {
            if let Some(tokens) = tokens {
                let presented = request.headers().get(hyper::header::AUTHORIZATION).and_then(|value| value.to_str().ok()).and_then(bearer);
                if !presented.is_some_and(|token| tokens.accepts(token)) {
                    let mut refused = Response::new(Full::new(Bytes::new()).boxed());
                    *refused.status_mut() = StatusCode::UNAUTHORIZED;
                    refused.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, hyper::header::HeaderValue::from_static("Bearer"));
                    return Ok(refused);
                }
            }
            request.extensions_mut().insert(connection);
            // A POST's response streams the call's progress and result: it is counted until its body ends,
            // so a stopping server lets it finish (a GET's stream only ever waits for server messages).
            let counted = (request.method() == hyper::Method::POST).then(|| responses.enter_owned());
            let deleting = request.method() == hyper::Method::DELETE;
            let mut response = tower_service::Service::call(&mut mcp, request).await?;
            if deleting && response.status() == StatusCode::ACCEPTED {
                // The session is gone when rmcp answers; 204 says so, and the Python SDK warns on anything but 200 or 204.
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            Ok(match counted {
                Some(guard) => response.map(|body| Counted { body, _guard: guard }.boxed()),
                None => response,
            })
        }
        _ => Ok(plain(StatusCode::NOT_FOUND, "not found: MCP is served at /mcp\n")),
    }
}

/// A response body counted among the responses still streaming until it ends or is dropped.
struct Counted {
    body: Body,
    _guard: OwnedInFlightGuard,
}

impl hyper::body::Body for Counted {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// The token of an `Authorization: Bearer <token>` value (the scheme in any case).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|token| !token.is_empty())
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_whole_and_files_without_tokens_are_refused() {
        let tokens = Tokens::parse("# lab tokens\n\n  first-token-0123456789  \nsecond-token-abcdefghij\n").unwrap();
        assert!(tokens.accepts("first-token-0123456789") && tokens.accepts("second-token-abcdefghij"));
        assert!(!tokens.accepts("first-token-012345678") && !tokens.accepts("") && !tokens.accepts("first-token-0123456789x"));
        assert_eq!(format!("{tokens:?}"), "Tokens(2 redacted)");
        assert!(Tokens::parse("\n# nothing\n").unwrap_err().contains("no token"));
        assert!(Tokens::parse("short\n").unwrap_err().contains("shorter than 16"));
    }

    #[test]
    fn only_a_bearer_authorization_carries_a_token() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("Bearerabc"), None);
    }

    #[test]
    fn origins_allow_any_port_of_a_bare_host_and_only_the_given_port_otherwise() {
        assert_eq!(origin_patterns("localhost"), ["http://localhost:*", "https://localhost:*"]);
        assert_eq!(origin_patterns("maps.example.org:8443"), ["http://maps.example.org:8443", "https://maps.example.org:8443"]);
        assert_eq!(origin_patterns("::1"), ["http://[::1]:*", "https://[::1]:*"]);
        assert_eq!(origin_patterns("[::1]"), ["http://[::1]:*", "https://[::1]:*"]);
    }
}
