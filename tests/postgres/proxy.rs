//! A slow link between a client and the test server: a TCP proxy on 127.0.0.1 that forwards
//! both ways and holds back, for a set time, the client's bytes that carry a given text (a
//! statement's SQL, as the extended protocol sends it when the statement is prepared). A
//! test uses it to make a statement reach the server late, as a slow link or a process paused
//! between deciding and sending would.

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
    /// that contain any of `texts` wait `delay` before they go on.
    pub fn start(server: u16, texts: &[&str], delay: Duration) -> Proxy {
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
                        pipe(client, upstream, texts.clone(), delay, h.clone());
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Proxy { port, hits, stop }
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
) {
    let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    // Server to client: as is.
    std::thread::spawn(move || copy(s2, c2, &[], delay, None));
    // Client to server: held back where a text shows.
    std::thread::spawn(move || copy(client, server, &texts, delay, Some(hits)));
}

fn copy(
    mut from: TcpStream,
    mut to: TcpStream,
    texts: &[Vec<u8>],
    delay: Duration,
    hits: Option<Arc<AtomicUsize>>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        if texts
            .iter()
            .any(|t| chunk.windows(t.len()).any(|w| w == &t[..]))
        {
            if let Some(h) = &hits {
                h.fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(delay);
        }
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
