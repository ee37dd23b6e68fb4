use tokio::io::AsyncWriteExt;

use super::*;

async fn frames_of(chunks: Vec<Vec<u8>>) -> (Vec<String>, usize) {
    let (mut write, read) = tokio::io::duplex(16);
    tokio::spawn(async move {
        for chunk in chunks {
            write.write_all(&chunk).await.unwrap();
        }
    });
    let mut frames = Frames::client(read);
    let mut bodies = Vec::new();
    loop {
        match frames.next().await.unwrap() {
            Frame::Body(body) => bodies.push(String::from_utf8(body).unwrap()),
            Frame::TooLarge(n) => bodies.push(format!("too large: {n}")),
            Frame::Short { length, got } => bodies.push(format!("short: {got}/{length}")),
            Frame::End { .. } => return (bodies, frames.skipped),
        }
    }
}

#[tokio::test]
async fn a_frame_arriving_byte_by_byte_is_whole() {
    let frame = b"Content-Length: 2\r\nContent-Type: x\r\n\r\n{}".to_vec();
    let chunks = frame.iter().map(|&b| vec![b]).collect();
    assert_eq!(frames_of(chunks).await, (vec!["{}".to_owned()], 0));
}

#[tokio::test]
async fn garbage_and_bad_headers_are_skipped_up_to_the_next_header() {
    let mut garbage = vec![b'x'; 100_000];
    garbage.extend_from_slice(b"\r\nContent-Length: 12x\r\n\r\nCONTENT-LENGTH:2\n\n[]");
    let (bodies, skipped) = frames_of(vec![garbage]).await;
    assert_eq!(bodies, vec!["[]".to_owned()]);
    // Blank lines between frames are not counted, wherever reads split.
    assert!((100_019..=100_025).contains(&skipped), "{skipped}");
}

#[tokio::test]
async fn an_over_large_length_is_reported_without_reading_the_body() {
    let frame = b"Content-Length: 67108865\r\n\r\n{}Content-Length: 1\r\n\r\n1".to_vec();
    let (bodies, skipped) = frames_of(vec![frame]).await;
    assert_eq!(
        bodies,
        vec!["too large: 67108865".to_owned(), "1".to_owned()]
    );
    assert_eq!(skipped, 2);
}

#[test]
fn only_json_rpc_that_tower_lsp_server_decodes_is_accepted() {
    assert!(check(br#"{"jsonrpc":"2.0","method":"initialized"}"#).is_ok());
    assert!(check(br#"{"jsonrpc":"2.0","id":"a","result":null}"#).is_ok());
    let refused = |body: &[u8]| check(body).err().expect("refused");
    let parse = refused(b"\xff{}");
    assert_eq!((parse.parse, parse.reason.as_str()), (true, "not UTF-8"));
    let nested = refused("[".repeat(10_000).as_bytes());
    assert!(nested.parse && nested.reason.contains("recursion limit"));
    let method = refused(br#"{"jsonrpc":"2.0","id":"k","method":5}"#);
    assert_eq!(method.id, Id::String("k".into()));
    assert_eq!(method.reason, "\"method\" must be a string");
    let scalar = refused(b"7");
    assert_eq!(scalar.reason, "a message must be a JSON object");
}
