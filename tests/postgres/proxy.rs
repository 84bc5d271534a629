//! A slow link between a client and the test server: a TCP proxy on 127.0.0.1 that forwards
//! both ways and holds back, for a set time, the client's bytes that carry a given text (a
//! statement's SQL, as the extended protocol sends it when the statement is prepared). A
//! test uses it to make a statement reach the server late, as a slow link or a process paused
//! between deciding and sending would. [`Proxy::cutting`] instead forwards those bytes and
//! then cuts the link before any answer comes back: a connection that dies mid-commit.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Proxy {
    pub port: u16,
    /// How many times the text was seen (and held back).
    hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    /// Forwards 127.0.0.1:`port` (the returned one) to 127.0.0.1:`server`; client bytes
    /// that contain any of `texts` wait `delay` before they go on (an empty text: every
    /// read of the client's bytes, about one a message the client sends at once).
    pub fn start(server: u16, texts: &[&str], delay: Duration) -> Proxy {
        Proxy::with(server, texts, delay, false)
    }

    /// Forwards as [`Proxy::start`], but client bytes that contain any of `texts` reach the
    /// server and then the link is cut both ways: the client never reads the answer.
    pub fn cutting(server: u16, texts: &[&str]) -> Proxy {
        Proxy::with(server, texts, Duration::ZERO, true)
    }

    fn with(server: u16, texts: &[&str], delay: Duration, cut: bool) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let texts: Vec<Vec<u8>> = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
        let (h, s) = (hits.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let upstream = TcpStream::connect(("127.0.0.1", server)).expect("server");
                        pipe(client, upstream, texts.clone(), delay, h.clone(), cut);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Proxy { port, hits, stop }
    }

    /// The URL of `url`'s store (a schema on the test server) reached through this proxy.
    pub fn store_url(&self, url: &str) -> String {
        format!(
            "postgres://claimdag:claimdag-test@127.0.0.1:{}/claimdag?sslmode=disable&schema={}",
            self.port,
            super::schema_of(url)
        )
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Waits (at most `limit`) until the text was seen `n` times.
    pub fn wait_for_hits(&self, n: usize, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if self.hits() >= n {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn pipe(
    client: TcpStream,
    server: TcpStream,
    texts: Vec<Vec<u8>>,
    delay: Duration,
    hits: Arc<AtomicUsize>,
    cut: bool,
) {
    let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let cut = cut.then(|| Arc::new(AtomicBool::new(false)));
    let cut2 = cut.clone();
    // Server to client: as is, until the link is cut.
    std::thread::spawn(move || copy(s2, c2, &[], delay, None, cut2));
    // Client to server: held back (or cut after) where a text shows.
    std::thread::spawn(move || copy(client, server, &texts, delay, Some(hits), cut));
}

fn copy(
    mut from: TcpStream,
    mut to: TcpStream,
    texts: &[Vec<u8>],
    delay: Duration,
    hits: Option<Arc<AtomicUsize>>,
    cut: Option<Arc<AtomicBool>>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        let hit = texts
            .iter()
            .any(|t| t.is_empty() || chunk.windows(t.len()).any(|w| w == &t[..]));
        if hit {
            if let Some(h) = &hits {
                h.fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(delay);
        }
        if let Some(c) = &cut {
            if hit {
                // Nothing the server answers from now on gets through.
                c.store(true, Ordering::SeqCst);
            } else if c.load(Ordering::SeqCst) {
                break;
            }
        }
        if to.write_all(chunk).is_err() {
            break;
        }
        if hit && cut.is_some() {
            let _ = from.shutdown(Shutdown::Both);
            let _ = to.shutdown(Shutdown::Write);
            return;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    if cut.is_some_and(|c| c.load(Ordering::SeqCst)) {
        let _ = from.shutdown(Shutdown::Both);
        let _ = to.shutdown(Shutdown::Both);
    }
}
