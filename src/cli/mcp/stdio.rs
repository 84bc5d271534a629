//! The stdio transport of `claimdag mcp`: one JSON-RPC message a line on stdin and stdout,
//! as rmcp's own, except that every line that cannot be decoded is answered, so that a
//! client never waits for nothing: bytes that are not UTF-8 and text that is not JSON (a
//! lone surrogate escape such as `\ud800` included) get -32700, parse error; JSON that is
//! not a message gets -32600, invalid request. The answer carries the request's id when it
//! can still be read (the bad bytes made good), else none. A notification is never answered.

use rmcp::model::{ErrorData, NumberOrString, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use std::future::Future;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Stdin};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::task::JoinHandle;

/// The longest line read (16 MiB, as rmcp's transport): a longer one is answered -32600
/// and dropped.
const MAX_LINE: usize = 16 << 20;

/// stdin read a line at a time; stdout written by one task, a whole line at a time, so
/// that a line is never cut by a cancelled read or interleaved with another.
pub struct Stdio {
    read: BufReader<Stdin>,
    line: Vec<u8>,
    /// Dropping the rest of a line longer than [`MAX_LINE`].
    discarding: bool,
    out: Option<UnboundedSender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
}

/// What one line is.
enum Decoded {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do: a blank line, or a notification that is not one the server knows.
    Skip,
    /// An error to answer, with the id of the request when it could be read.
    Answer(Option<RequestId>, ErrorData),
}

impl Stdio {
    /// The transport over the process's stdin and stdout (inside the tokio runtime).
    pub fn new() -> Stdio {
        let (tx, mut rx) = unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            let mut out = tokio::io::stdout();
            while let Some(line) = rx.recv().await {
                if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
        });
        Stdio {
            read: BufReader::new(tokio::io::stdin()),
            line: Vec::new(),
            discarding: false,
            out: Some(tx),
            writer: Some(writer),
        }
    }

    /// Queues one message for stdout.
    fn write(&self, msg: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(msg)?;
        line.push(b'\n');
        let closed = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed");
        self.out
            .as_ref()
            .ok_or_else(closed)?
            .send(line)
            .map_err(|_| closed())
    }

    /// Reads up to the end of the next line into `self.line`: `false` at the end of stdin.
    /// Cancel-safe: the bytes read so far stay in `self.line` for the next call.
    async fn fill_line(&mut self) -> bool {
        loop {
            let budget = (MAX_LINE + 1 - self.line.len()) as u64;
            let read = (&mut self.read)
                .take(budget)
                .read_until(b'\n', &mut self.line)
                .await;
            match read {
                Ok(0) | Err(_) => return false,
                Ok(_) if self.line.last() == Some(&b'\n') => return true,
                Ok(_) if self.line.len() > MAX_LINE => {
                    self.line.clear();
                    if !self.discarding {
                        self.discarding = true;
                        let e = ErrorData::invalid_request(
                            format!("a message longer than {MAX_LINE} bytes was dropped"),
                            None,
                        );
                        let _ = self.write(&TxJsonRpcMessage::<RoleServer>::error(e, None));
                    }
                }
                Ok(_) => {}
            }
        }
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        std::future::ready(self.write(&item))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.fill_line().await {
                return None;
            }
            let line = std::mem::take(&mut self.line);
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            match decode(&line) {
                Decoded::Message(m) => return Some(*m),
                Decoded::Skip => {}
                Decoded::Answer(id, e) => {
                    if self
                        .write(&TxJsonRpcMessage::<RoleServer>::error(e, id))
                        .is_err()
                    {
                        return None;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> std::io::Result<()> {
        // Every queued answer is written before the server ends.
        drop(self.out.take());
        if let Some(w) = self.writer.take() {
            let _ = w.await;
        }
        Ok(())
    }
}

/// One line as a message, or what to answer it.
fn decode(line: &[u8]) -> Decoded {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Skip;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            let id = id_in(&String::from_utf8_lossy(line));
            let why = format!(
                "Parse error: the message is not UTF-8 (a bad byte at offset {})",
                e.valid_up_to()
            );
            return Decoded::Answer(id, ErrorData::parse_error(why, None));
        }
    };
    match serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(m) => Decoded::Message(Box::new(m)),
        Err(e) if e.is_syntax() || e.is_eof() => {
            let why = format!("Parse error: the message is not JSON: {e}");
            Decoded::Answer(
                id_in(&mend_surrogates(text)),
                ErrorData::parse_error(why, None),
            )
        }
        Err(e) => {
            let value: Value = serde_json::from_str(text).unwrap_or_default();
            let notification = value.get("method").is_some() && value.get("id").is_none();
            if notification {
                return Decoded::Skip;
            }
            let why = format!("Invalid request: not a JSON-RPC message of MCP: {e}");
            Decoded::Answer(id_of(&value), ErrorData::invalid_request(why, None))
        }
    }
}

/// The id of the request in `text`, if it is JSON once made good.
fn id_in(text: &str) -> Option<RequestId> {
    id_of(&serde_json::from_str(text).ok()?)
}

fn id_of(value: &Value) -> Option<RequestId> {
    match value.get("id")? {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        _ => None,
    }
}

/// `text` with every `\uD800`-`\uDFFF` escape made `\uFFFD`: JSON then, if a lone surrogate
/// was all that was wrong (only to read the id of a message that is refused anyway).
fn mend_surrogates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let esc = rest.get(at..at + 6).unwrap_or(&rest[at..]);
        let surrogate = esc.len() == 6
            && esc[2..].bytes().all(|b| b.is_ascii_hexdigit())
            && esc[2..3].eq_ignore_ascii_case("d")
            && matches!(esc.as_bytes()[3].to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f');
        out.push_str(if surrogate { "\\uFFFD" } else { &esc[..2] });
        rest = &rest[at + if surrogate { 6 } else { 2 }..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_mended_only_to_read_the_id() {
        let line = r#"{"id":4,"x":"\ud800 \uDFFF \u0041 \\u"}"#;
        assert_eq!(
            mend_surrogates(line),
            r#"{"id":4,"x":"\uFFFD \uFFFD \u0041 \\u"}"#
        );
        assert!(matches!(
            decode(line.as_bytes()),
            Decoded::Answer(Some(NumberOrString::Number(4)), _)
        ));
        assert!(matches!(
            decode(b"{\"id\":\"a\",\"x\":\"\xff\"}\n"),
            Decoded::Answer(Some(NumberOrString::String(_)), _)
        ));
        assert!(matches!(decode(b"{ not json"), Decoded::Answer(None, _)));
        assert!(matches!(decode(b" \r\n"), Decoded::Skip));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":5}"#),
            Decoded::Skip
        ));
    }
}
