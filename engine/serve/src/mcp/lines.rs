//! The stdio transport's guard: newline-delimited JSON-RPC read with a cap on a
//! line's length, and an answer to every line the SDK would drop in silence.
//!
//! Lines are read here, not by the SDK: a line longer than [`MAX_LINE`] is
//! discarded as it streams in (memory stays bounded) and answered with a JSON-RPC
//! error (`-32600`, under the request's id when its opening bytes name one); a line
//! that is not JSON gets `-32700` (parse error) and one that is JSON but no
//! JSON-RPC message of a client gets `-32600` (invalid request). Only well-formed
//! messages reach the SDK, through an in-memory pipe; its output and these errors
//! share one writer, a line at a time.

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;

/// The longest line (one JSON-RPC message) read over stdio, in bytes.
pub const MAX_LINE: usize = 8 << 20;

/// How much of an over-long line is kept to find its id.
const ID_PREFIX: usize = 4096;

/// A JSON-RPC error response line.
fn error_line(id: serde_json::Value, code: i64, message: &str) -> Vec<u8> {
    let v = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    let mut line = v.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// The id an over-long message's first bytes give (`"id": 7` or `"id": "x"` at
/// the top of the object), else null.
fn id_of_prefix(prefix: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(prefix);
    let mut rest = text.as_ref();
    while let Some(i) = rest.find("\"id\"") {
        rest = &rest[i + 4..];
        let Some(after) = rest.trim_start().strip_prefix(':') else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_str(after).into_iter::<serde_json::Value>();
        if let Some(Ok(v)) = values.next()
            && (v.is_string() || v.is_number())
        {
            return v;
        }
    }
    serde_json::Value::Null
}

/// What to do with one complete line.
fn judge(line: &[u8]) -> Result<(), Vec<u8>> {
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|e| {
        error_line(
            serde_json::Value::Null,
            -32700,
            &format!("parse error: {e}"),
        )
    })?;
    let id = value.get("id").cloned().unwrap_or(serde_json::Value::Null);
    serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value).map_err(|e| {
        error_line(
            id,
            -32600,
            &format!("invalid request: not a JSON-RPC 2.0 message this server knows ({e})"),
        )
    })?;
    Ok(())
}

/// Reads `input` line by line until it ends: messages go to `to_sdk`, answers to
/// bad lines to `out`. `max_line` caps a line's length.
async fn pump_in(
    input: impl AsyncRead + Unpin,
    mut to_sdk: impl AsyncWrite + Unpin,
    out: mpsc::UnboundedSender<Vec<u8>>,
    max_line: usize,
) {
    let mut r = BufReader::with_capacity(64 * 1024, input);
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    while let Ok(buf) = r.fill_buf().await {
        if buf.is_empty() {
            break;
        }
        let (chunk, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if too_long {
            let room = ID_PREFIX.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        } else if line.len() + chunk.len() > max_line {
            too_long = true;
            let room = ID_PREFIX.saturating_sub(line.len());
            line.truncate(ID_PREFIX);
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        } else {
            line.extend_from_slice(chunk);
        }
        let used = end.unwrap_or(buf.len());
        r.consume(used);
        if end.is_none() {
            continue;
        }
        let done = std::mem::take(&mut line);
        if std::mem::take(&mut too_long) {
            let message = format!("message too long: a line may hold at most {max_line} bytes");
            let _ = out.send(error_line(id_of_prefix(&done), -32600, &message));
            continue;
        }
        let trimmed = done.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        match judge(trimmed) {
            Ok(()) => {
                let mut msg = trimmed.to_vec();
                msg.push(b'\n');
                if to_sdk.write_all(&msg).await.is_err() {
                    break;
                }
            }
            Err(answer) => {
                let _ = out.send(answer);
            }
        }
    }
    // The client is gone: the SDK sees its input end.
    let _ = to_sdk.shutdown().await;
}

/// Forwards the SDK's output, a line at a time, to `out`.
async fn pump_out(from_sdk: impl AsyncRead + Unpin, out: mpsc::UnboundedSender<Vec<u8>>) {
    let mut lines = BufReader::new(from_sdk);
    loop {
        let mut line = Vec::new();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if out.send(line).is_err() {
                    break;
                }
            }
        }
    }
}

/// Writes every line sent to `lines` to `output`, in order.
async fn write_out(
    mut output: impl AsyncWrite + Unpin,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(l) = lines.recv().await {
        if output.write_all(&l).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

/// The transport the SDK is served over: the reading end of the guarded input and
/// the writing end of the output. The pumps run as tasks until `input` ends.
pub(crate) fn guarded<R, W>(
    input: R,
    output: W,
    max_line: usize,
) -> (tokio::io::DuplexStream, tokio::io::DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_sdk, sdk_in) = tokio::io::duplex(256 * 1024);
    let (sdk_out, from_sdk) = tokio::io::duplex(256 * 1024);
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(pump_in(input, to_sdk, tx.clone(), max_line));
    tokio::spawn(pump_out(from_sdk, tx));
    tokio::spawn(write_out(output, rx));
    (sdk_in, sdk_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_at_the_top_of_a_long_message() {
        assert_eq!(
            id_of_prefix(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","par"#),
            serde_json::json!(7)
        );
        assert_eq!(
            id_of_prefix(br#"{"id" : "a-1", "x"#),
            serde_json::json!("a-1")
        );
        assert_eq!(
            id_of_prefix(br#"{"jsonrpc":"2.0","method":"x"#),
            serde_json::Value::Null
        );
    }

    #[test]
    fn bad_lines_are_judged() {
        let e = judge(b"garbage").unwrap_err();
        let v: serde_json::Value = serde_json::from_slice(&e).unwrap();
        assert_eq!(v["error"]["code"], -32700);
        let e = judge(br#"{"id": 3, "hello": 1}"#).unwrap_err();
        let v: serde_json::Value = serde_json::from_slice(&e).unwrap();
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (serde_json::json!(3), serde_json::json!(-32600))
        );
        assert!(judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_ok());
    }
}
