//! HTTPS behind a private (company) CA: the real `ask-lsp status` against the
//! simulated server behind a TLS front whose certificate a private CA signed
//! (tests/fixtures/tls). ask-lsp trusts the operating system's store, which
//! on Linux `SSL_CERT_FILE` names; bundled web roots alone would refuse it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::common::*;
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

/// Serves TLS on a loopback port and passes each connection's plain bytes
/// to `backend`; returns the `https://` URL.
async fn tls_front(backend: String) -> String {
    let certs = CertificateDer::pem_file_iter(fixture("server.pem"))
        .expect("server.pem")
        .collect::<Result<Vec<_>, _>>()
        .expect("server.pem certificates");
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).expect("server.key");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server certificate");
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let backend = backend.clone();
            tokio::spawn(async move {
                // A refused handshake (the client distrusts the CA) ends here.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = TcpStream::connect(&backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    format!("https://127.0.0.1:{port}")
}

async fn status(url: &str, cert_file: Option<PathBuf>) -> (Option<i32>, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ask-lsp"));
    command
        .args(["status", "--url", url])
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("ASK_LSP_URL")
        .env_remove("SSL_CERT_DIR")
        .env_remove("SSL_CERT_FILE")
        .kill_on_drop(true);
    if let Some(file) = cert_file {
        command.env("SSL_CERT_FILE", file);
    }
    let output = tokio::time::timeout(WAIT, command.output())
        .await
        .expect("status finishes")
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[tokio::test]
async fn a_server_signed_by_a_ca_in_the_trust_store_connects_and_others_are_refused_plainly() {
    let sim = sim().await;
    let question = sim.ask(None, database());
    let backend = sim.url().trim_start_matches("http://").to_owned();
    let url = tls_front(backend).await;

    let (code, out, err) = status(&url, Some(fixture("ca.pem"))).await;
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        out,
        format!(
            "default {url} (OpenCode 1.x): connected\n  \
             1 prompt pending:\n  \
             - question \"Database\" (session {session}, /sim/project)\n",
            session = question.session_id,
        )
    );

    // The system store without the private CA: a certificate error, said
    // plainly, and no panic.
    let (code, out, err) = status(&url, None).await;
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.ends_with(&format!(
            "default {url} (OpenCode): NOT CONNECTED\n  \
             cannot reach OpenCode at {url}: invalid peer certificate: UnknownIssuer — \
             is the CA that signed its certificate in the system's trust store \
             (or in the file SSL_CERT_FILE names)?\n"
        )),
        "{out}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
