//! A load generator for MCP servers (the HTTP benchmark's driver, `tests/bench/bench_http.py`, runs it):
//! `--clients` MCP clients, one thread each, call one tool back to back, each waiting for its answer
//! before the next call, over streamable HTTP (one session per client, protocol 2025-06-18) or over
//! stdio (one server process per client, as MCP hosts run stdio servers). Every client connects and
//! initializes first; then all start together, and the calls that end within `--seconds` after a
//! `--warmup` are counted. A call counts as failed unless its answer is a result with `isError` false.
//! `--tool ping` sends MCP's `ping` instead of a tool call: the transport's round trip, the floor
//! the latency benchmark divides by; `--tool tools/list` sends that request, a large answer the
//! server keeps ready (the floor for a tool whose answer is as large).
//!
//! Written in Rust with blocking sockets so that the generator spends little of the machine's CPU
//! beside the server it measures. Prints one JSON line: calls, calls per second, failures, p50/p99 ms, and the size of one answer.
//!
//! Usage: bench_mcp_clients (--http URL [--token TOKEN] | --stdio BINARY) --tool NAME
//!        [--arguments JSON] [--clients N] [--seconds S] [--warmup S]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const PROTOCOL_VERSION: &str = "2025-06-18";

/// Where the clients connect.
#[derive(Clone)]
enum Target {
    Http { url: String, token: Option<String> },
    Stdio { binary: String },
}

struct Options {
    target: Target,
    tool: String,
    arguments: Value,
    clients: usize,
    seconds: f64,
    warmup: f64,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let (mut url, mut token, mut binary, mut tool) = (None, None, None, None);
    let (mut arguments, mut clients, mut seconds, mut warmup) = (json!({}), 1, 5.0, 1.0);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--http" => url = Some(value()?),
            "--token" => token = Some(value()?),
            "--stdio" => binary = Some(value()?),
            "--tool" => tool = Some(value()?),
            "--arguments" => arguments = serde_json::from_str(&value()?).map_err(|error| format!("--arguments: {error}"))?,
            "--clients" => clients = value()?.parse().map_err(|error| format!("--clients: {error}"))?,
            "--seconds" => seconds = value()?.parse().map_err(|error| format!("--seconds: {error}"))?,
            "--warmup" => warmup = value()?.parse().map_err(|error| format!("--warmup: {error}"))?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    let target = match (url, binary) {
        (Some(url), None) => Target::Http { url, token },
        (None, Some(binary)) => Target::Stdio { binary },
        _ => return Err("give exactly one of --http URL and --stdio BINARY".to_owned()),
    };
    let tool = tool.ok_or("--tool is required")?;
    Ok(Options { target, tool, arguments, clients, seconds, warmup })
}

/// One MCP client that sends a request and waits for its answer.
trait Client: Send {
    /// Sends `message`; returns the response whose id is `id` (None for a notification).
    fn exchange(&mut self, message: &Value, id: Option<u64>) -> Result<Option<Value>, String>;
}

fn initialize(client: &mut dyn Client) -> Result<(), String> {
    let request = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "bench_mcp_clients", "version": "1"}},
    });
    let answer = client.exchange(&request, Some(0))?.ok_or("no answer to initialize")?;
    if answer.get("result").is_none() {
        return Err(format!("initialize failed: {answer}"));
    }
    client.exchange(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), None)?;
    Ok(())
}

/// Streamable HTTP over one keep-alive connection (reopened when the server closes it).
struct HttpClient {
    address: String,
    path: String,
    token: Option<String>,
    session: Option<String>,
    connection: Option<BufReader<TcpStream>>,
}

impl HttpClient {
    fn new(url: &str, token: Option<String>) -> Result<HttpClient, String> {
        let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
        let (address, path) = rest.split_once('/').map_or((rest, "/".to_owned()), |(address, path)| (address, format!("/{path}")));
        Ok(HttpClient { address: address.to_owned(), path, token, session: None, connection: None })
    }

    fn post(&mut self, body: &[u8]) -> Result<Response, String> {
        let mut request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.address,
            body.len()
        );
        if let Some(token) = &self.token {
            request += &format!("Authorization: Bearer {token}\r\n");
        }
        if let Some(session) = &self.session {
            request += &format!("Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: {PROTOCOL_VERSION}\r\n");
        }
        request += "\r\n";
        if self.connection.is_none() {
            let stream = TcpStream::connect(&self.address).map_err(|error| format!("connect {}: {error}", self.address))?;
            stream.set_nodelay(true).map_err(|error| error.to_string())?;
            self.connection = Some(BufReader::new(stream));
        }
        let connection = self.connection.as_mut().expect("connected above");
        let stream = connection.get_mut();
        stream.write_all(request.as_bytes()).and_then(|()| stream.write_all(body)).map_err(|error| error.to_string())?;
        let response = read_response(connection).map_err(|error| error.to_string())?;
        if !response.keep_alive {
            self.connection = None;
        }
        Ok(response)
    }
}

/// One HTTP response.
struct Response {
    status: u16,
    /// Names in lower case.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Whether the connection stays open for the next request.
    keep_alive: bool,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

fn read_line(reader: &mut impl BufRead) -> std::io::Result<String> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the server closed the connection"));
    }
    Ok(line.trim_end().to_owned())
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

/// A response: its status line, headers and body (chunked, sized, or up to the connection's end).
fn read_response(reader: &mut impl BufRead) -> std::io::Result<Response> {
    let status_line = read_line(reader)?;
    let status: u16 = status_line.split(' ').nth(1).and_then(|code| code.parse().ok()).ok_or_else(|| invalid("bad status line"))?;
    let mut headers = Vec::new();
    loop {
        let line = read_line(reader)?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').ok_or_else(|| invalid("bad header"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut response = Response { status, headers, body: Vec::new(), keep_alive: true };
    response.keep_alive = !response.header("connection").is_some_and(|value| value.eq_ignore_ascii_case("close"));
    let chunked = response.header("transfer-encoding").is_some_and(|value| value.eq_ignore_ascii_case("chunked"));
    let length = response.header("content-length").map(str::to_owned);
    let body = &mut response.body;
    if chunked {
        loop {
            let size_line = read_line(reader)?;
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16).map_err(|_| invalid("bad chunk size"))?;
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            read_line(reader)?; // the CRLF after the chunk (or the end of the trailers)
            if size == 0 {
                break;
            }
        }
    } else if let Some(length) = length {
        let length: usize = length.parse().map_err(|_| invalid("bad content-length"))?;
        body.resize(length, 0);
        reader.read_exact(body)?;
    } else if status != 202 && status != 204 {
        reader.read_to_end(body)?;
        response.keep_alive = false;
    }
    Ok(response)
}

/// The JSON-RPC messages of a response body: one JSON document, or the `data:` lines of an SSE stream.
fn messages(content_type: &str, body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body);
    if content_type.starts_with("text/event-stream") {
        text.lines().filter_map(|line| line.strip_prefix("data:")).filter_map(|data| serde_json::from_str(data.trim()).ok()).collect()
    } else {
        serde_json::from_str(&text).into_iter().collect()
    }
}

impl Client for HttpClient {
    fn exchange(&mut self, message: &Value, id: Option<u64>) -> Result<Option<Value>, String> {
        let response = self.post(message.to_string().as_bytes())?;
        if !(200..300).contains(&response.status) {
            return Err(format!("HTTP {}: {}", response.status, String::from_utf8_lossy(&response.body)));
        }
        if let Some(session) = response.header("mcp-session-id") {
            self.session = Some(session.to_owned());
        }
        let Some(id) = id else { return Ok(None) };
        let answer = messages(response.header("content-type").unwrap_or(""), &response.body).into_iter().find(|message| message.get("id") == Some(&json!(id)));
        answer.map(Some).ok_or_else(|| format!("no answer to request {id} in: {}", String::from_utf8_lossy(&response.body)))
    }
}

/// Newline-delimited JSON-RPC with a server process of its own.
struct StdioClient {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl StdioClient {
    fn spawn(binary: &str) -> Result<StdioClient, String> {
        let mut child =
            Command::new(binary).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().map_err(|error| format!("{binary}: {error}"))?;
        let input = child.stdin.take().expect("piped");
        let output = BufReader::new(child.stdout.take().expect("piped"));
        Ok(StdioClient { child, input, output })
    }
}

impl Client for StdioClient {
    fn exchange(&mut self, message: &Value, id: Option<u64>) -> Result<Option<Value>, String> {
        writeln!(self.input, "{message}").and_then(|()| self.input.flush()).map_err(|error| error.to_string())?;
        let Some(id) = id else { return Ok(None) };
        loop {
            let line = read_line(&mut self.output).map_err(|error| error.to_string())?;
            let answer: Value = serde_json::from_str(&line).map_err(|error| format!("{error}: {line}"))?;
            if answer.get("id") == Some(&json!(id)) {
                return Ok(Some(answer));
            }
        }
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One finished call: when it ended, how long it took, whether it succeeded.
struct Call {
    ended: Instant,
    millis: f64,
    ok: bool,
}

fn connect(target: &Target) -> Result<Box<dyn Client>, String> {
    let mut client: Box<dyn Client> = match target {
        Target::Http { url, token } => Box::new(HttpClient::new(url, token.clone())?),
        Target::Stdio { binary } => Box::new(StdioClient::spawn(binary)?),
    };
    initialize(client.as_mut())?;
    Ok(client)
}

fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    sorted.get(((sorted.len() as f64 * fraction) as usize).min(sorted.len().saturating_sub(1))).copied().unwrap_or(f64::NAN)
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("bench_mcp_clients: {message}");
            std::process::exit(2);
        }
    };
    let options = Arc::new(options);
    let start = Arc::new(Barrier::new(options.clients + 1));
    let workers: Vec<_> = (0..options.clients)
        .map(|_| {
            let (options, start) = (Arc::clone(&options), Arc::clone(&start));
            std::thread::spawn(move || -> Result<(Vec<Call>, usize), String> {
                let connected = connect(&options.target);
                let began = {
                    start.wait(); // everyone connected (or failed to), then go
                    Instant::now()
                };
                let mut client = connected?;
                let until = began + Duration::from_secs_f64(options.warmup + options.seconds);
                let mut calls = Vec::new();
                let (mut id, mut answer_bytes) = (1, 0);
                while Instant::now() < until {
                    let request = match options.tool.as_str() {
                        method @ ("ping" | "tools/list") => json!({"jsonrpc": "2.0", "id": id, "method": method}),
                        tool => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": options.arguments}}),
                    };
                    let sent = Instant::now();
                    let answer = client.exchange(&request, Some(id))?.expect("a request is answered");
                    if answer_bytes == 0 {
                        answer_bytes = answer.to_string().len(); // as compact JSON: the size the server sends, near enough
                    }
                    let ok = answer.get("result").is_some() && answer.pointer("/result/isError") != Some(&Value::Bool(true));
                    calls.push(Call { ended: Instant::now(), millis: sent.elapsed().as_secs_f64() * 1000.0, ok });
                    id += 1;
                }
                Ok((calls, answer_bytes))
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    let (window_start, window_end) = (began + Duration::from_secs_f64(options.warmup), began + Duration::from_secs_f64(options.warmup + options.seconds));
    let (mut millis, mut failed, mut errors, mut answer_bytes) = (Vec::new(), 0usize, Vec::new(), 0);
    for worker in workers {
        match worker.join().expect("a client thread panicked") {
            Ok((calls, bytes)) => {
                answer_bytes = answer_bytes.max(bytes);
                for call in calls.into_iter().filter(|call| call.ended >= window_start && call.ended <= window_end) {
                    failed += usize::from(!call.ok);
                    millis.push(call.millis);
                }
            }
            Err(error) => errors.push(error),
        }
    }
    millis.sort_by(f64::total_cmp);
    let report = json!({
        "clients": options.clients,
        "calls": millis.len(),
        "calls_per_second": millis.len() as f64 / options.seconds,
        "failed": failed,
        "client_errors": errors,
        "p50_ms": percentile(&millis, 0.5),
        "p99_ms": percentile(&millis, 0.99),
        "answer_bytes": answer_bytes,
    });
    println!("{report}");
}
