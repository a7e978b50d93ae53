//! A tiny HTTP/1.1 responder with one purpose: `GET /metrics` (and `HEAD`), every other
//! path 404, every other method on it 405. One request per connection (`Connection:
//! close`), a request head of at most 8 KiB, every read and write of a connection with a
//! timeout, and at most a few connections served at once: a client that stalls or floods
//! holds a thread for the timeout at most, never the server.

use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The path the metrics are served on.
pub const METRICS_PATH: &str = "/metrics";

/// The longest request head read; a longer one is answered 431.
const MAX_HEAD: usize = 8192;

/// How often the accept loop looks at its stop condition.
const POLL: Duration = Duration::from_millis(50);

/// What the server answers with.
pub struct Responder<F> {
    /// The body of `GET /metrics` and its content type; called once per such request
    /// (and per `HEAD`, whose answer carries the length of the body it would have had).
    pub metrics: F,
    /// The timeout of every read and write on a connection.
    pub io_timeout: Duration,
    /// Connections served at once; one more is answered 503 at once and closed.
    pub max_connections: usize,
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// `Allow`, on a 405.
    pub allow: Option<&'static str>,
    /// The body (left out of the answer to a `HEAD`, its length kept).
    pub body: Vec<u8>,
}

impl Response {
    fn text(status: u16, body: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            allow: None,
            body: format!("{body}\n").into_bytes(),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Why a request head could not be read.
#[derive(Debug, PartialEq, Eq)]
enum HeadError {
    /// Nothing arrived within the timeout, or the client went away first.
    Gone,
    /// Longer than [`MAX_HEAD`].
    TooLarge,
}

/// Reads the request head (up to the blank line), byte chunks as they come.
fn read_head(stream: &mut impl Read) -> std::result::Result<Vec<u8>, HeadError> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            return Ok(head);
        }
        if head.len() > MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return Err(HeadError::Gone),
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
}

/// The method and the target's path of a request head, or None when its request line is
/// not `METHOD TARGET HTTP/1.x`.
fn request_line(head: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(head).ok()?;
    let line = text.lines().next()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
        || !target.starts_with('/')
        || !version.trim_end().starts_with("HTTP/1.")
    {
        return None;
    }
    let path = target.split(['?', '#']).next().unwrap_or(target);
    Some((method.to_string(), path.to_string()))
}

/// The answer to `method` on `path`; `metrics` is called only for `GET` and `HEAD` of
/// [`METRICS_PATH`].
fn route(method: &str, path: &str, metrics: impl FnOnce() -> (Vec<u8>, &'static str)) -> Response {
    if path != METRICS_PATH {
        return Response::text(404, &format!("not found: metrics are on {METRICS_PATH}"));
    }
    match method {
        "GET" | "HEAD" => {
            let (body, content_type) = metrics();
            Response {
                status: 200,
                content_type,
                allow: None,
                body,
            }
        }
        _ => Response {
            allow: Some("GET, HEAD"),
            ..Response::text(405, &format!("{METRICS_PATH} answers GET and HEAD"))
        },
    }
}

fn write_response(stream: &mut impl Write, r: &Response, with_body: bool) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    if let Some(allow) = r.allow {
        head.push_str(&format!("Allow: {allow}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    if with_body {
        out.extend_from_slice(&r.body);
    }
    stream.write_all(&out)?;
    stream.flush()
}

/// Serves one connection: reads its request, answers, closes.
fn handle<F>(mut stream: TcpStream, responder: &Responder<F>)
where
    F: Fn() -> (Vec<u8>, &'static str),
{
    let _ = stream.set_read_timeout(Some(responder.io_timeout));
    let _ = stream.set_write_timeout(Some(responder.io_timeout));
    let (response, with_body) = match read_head(&mut stream) {
        Err(HeadError::Gone) => return,
        Err(HeadError::TooLarge) => (Response::text(431, "request head too large"), true),
        Ok(head) => match request_line(&head) {
            None => (Response::text(400, "not an HTTP/1.x request"), true),
            Some((method, path)) => {
                let r = route(&method, &path, &responder.metrics);
                (r, method != "HEAD")
            }
        },
    };
    let _ = write_response(&mut stream, &response, with_body);
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Decrements the count of connections being served when the thread serving one ends,
/// however it ends.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Accepts connections on `listener` until `stop` answers true (looked at every 50 ms),
/// each served on a thread of its own.
pub fn serve<F>(
    listener: TcpListener,
    responder: Arc<Responder<F>>,
    stop: impl Fn() -> bool,
) -> Result<()>
where
    F: Fn() -> (Vec<u8>, &'static str) + Send + Sync + 'static,
{
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::io("cannot make the listening socket non-blocking", e))?;
    let active = Arc::new(AtomicUsize::new(0));
    while !stop() {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(POLL);
                continue;
            }
            Err(e) => {
                // Out of descriptors and the like: wait a little rather than spin.
                crate::output::log(1, &format!("exporter: accept failed: {e}"));
                std::thread::sleep(POLL);
                continue;
            }
        };
        if stream.set_nonblocking(false).is_err() {
            continue;
        }
        if active.fetch_add(1, Ordering::SeqCst) >= responder.max_connections {
            let slot = Slot(Arc::clone(&active));
            let mut stream = stream;
            let _ = stream.set_write_timeout(Some(responder.io_timeout));
            let busy = Response::text(503, "too many scrapes at once");
            let _ = write_response(&mut stream, &busy, true);
            drop(slot);
            continue;
        }
        let slot = Slot(Arc::clone(&active));
        let responder = Arc::clone(&responder);
        std::thread::spawn(move || {
            let _slot = slot;
            handle(stream, &responder);
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// A server on a free loopback port answering `body` on /metrics; stopped when the
    /// returned flag is set.
    fn server(io_timeout: Duration) -> (std::net::SocketAddr, Arc<AtomicBool>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let responder = Arc::new(Responder {
            metrics: || (b"shardctl_x 1\n".to_vec(), super::super::text::CONTENT_TYPE),
            io_timeout,
            max_connections: 2,
        });
        std::thread::spawn(move || serve(listener, responder, || flag.load(Ordering::SeqCst)));
        (addr, stop)
    }

    fn ask(addr: std::net::SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn get_and_head_of_metrics_and_the_refusals() {
        let (addr, stop) = server(Duration::from_secs(5));
        let got = ask(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        assert!(
            got.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            "{got}"
        );
        assert!(got.contains("Content-Length: 13\r\n"), "{got}");
        assert!(got.ends_with("\r\n\r\nshardctl_x 1\n"), "{got}");
        // A query string is no other path; HTTP/1.0 and bare line feeds are understood.
        let got = ask(addr, b"GET /metrics?x=1 HTTP/1.0\n\n");
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        let head = ask(addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("Content-Length: 13\r\n"), "{head}");
        assert!(
            head.ends_with("\r\n\r\n"),
            "a HEAD answer has no body: {head}"
        );
        for path in ["/", "/metrics/", "/favicon.ico", "/metricsx"] {
            let got = ask(addr, format!("GET {path} HTTP/1.1\r\n\r\n").as_bytes());
            assert!(
                got.starts_with("HTTP/1.1 404 Not Found\r\n"),
                "{path}: {got}"
            );
        }
        let got = ask(addr, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
        assert!(
            got.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
            "{got}"
        );
        assert!(got.contains("Allow: GET, HEAD\r\n"), "{got}");
        for bad in [
            &b"hello\r\n\r\n"[..],
            b"GET /metrics\r\n\r\n",
            b"GET metrics HTTP/1.1\r\n\r\n",
            b"GET /metrics SPDY/3\r\n\r\n",
            b"get /metrics HTTP/1.1\r\n\r\n",
        ] {
            let got = ask(addr, bad);
            assert!(
                got.starts_with("HTTP/1.1 400 Bad Request\r\n"),
                "{bad:?}: {got}"
            );
        }
        let huge = format!("GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(10_000));
        let got = ask(addr, huge.as_bytes());
        assert!(got.starts_with("HTTP/1.1 431 "), "{got}");
        stop.store(true, Ordering::SeqCst);
    }

    /// A client that connects and sends nothing holds its connection for the timeout only,
    /// and the others are answered meanwhile.
    #[test]
    fn a_silent_client_is_dropped_after_the_timeout() {
        let (addr, stop) = server(Duration::from_millis(300));
        let started = std::time::Instant::now();
        let mut silent = TcpStream::connect(addr).unwrap();
        let got = ask(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        silent
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut out = Vec::new();
        let n = silent.read_to_end(&mut out).unwrap_or(0);
        assert_eq!(n, 0, "the silent client got {out:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        stop.store(true, Ordering::SeqCst);
    }

    #[test]
    fn request_lines_are_read_strictly() {
        assert_eq!(
            request_line(b"GET /metrics?a=b HTTP/1.1\r\n\r\n"),
            Some(("GET".into(), "/metrics".into()))
        );
        assert_eq!(request_line(b"GET /metrics HTTP/2\r\n\r\n"), None);
        assert_eq!(request_line(b"GET  /metrics HTTP/1.1\r\n\r\n"), None);
        assert_eq!(request_line(b"\xff\xfe\r\n\r\n"), None);
        assert_eq!(
            read_head(&mut &b"GET / HTTP/1.1\r\n"[..]),
            Err(HeadError::Gone)
        );
    }
}
