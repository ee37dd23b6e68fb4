//! The one HTTP client every backend uses, and one bounded exchange that
//! turns what a server answered into a response or a clear [`BackendError`].

use std::sync::{Arc, OnceLock};

use futures_util::StreamExt;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::backends::{BackendError, BodyKind, Cause, ConnectHint, Expected, ServerLabel, Timing};

/// Whom errors name, and the advice each backend gives.
pub(in crate::backends) struct Peer {
    /// Whom errors name: "OpenCode at http://127.0.0.1:4096".
    pub label: ServerLabel,
    /// What ask-lsp expects to answer there ("an OpenCode server"); what
    /// to check on a refused connection or a 401 follows from it.
    pub expected: Expected,
}

/// The largest response body read (a listing of every pending prompt fits
/// many times over); a larger one is an error, not a memory spike.
pub(in crate::backends) const MAX_BODY: usize = 16 << 20;

/// A client builder with the one crypto provider (ring) and the one trust
/// store every client shares (see [`tls`]): reqwest is built without a
/// provider of its own (`rustls-no-provider`, Cargo.toml).
pub(in crate::backends) fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().tls_backend_preconfigured(tls().clone())
}

/// The TLS settings of every client, made once. HTTPS trusts the operating
/// system's store (`SSL_CERT_FILE` / `SSL_CERT_DIR` on Linux), read when a
/// first server presents a certificate: reqwest's own settings read the
/// whole store again for each client (about 0.2 MiB each, 9 MiB for 50
/// servers; docs/performance.md), and for nothing when every server is
/// `http://`. A clone shares the verifier and the session cache.
fn tls() -> &'static rustls::ClientConfig {
    static TLS: OnceLock<rustls::ClientConfig> = OnceLock::new();
    TLS.get_or_init(|| {
        // Err only when a provider is installed already, which is the aim.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("ring supports TLS 1.2 and 1.3")
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(SystemTrust {
                provider,
                store: OnceLock::new(),
            }))
            .with_no_client_auth();
        // As reqwest sets it for a client of its own making (no HTTP/2 here).
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config
    })
}

/// The operating system's trust store through rustls-platform-verifier,
/// loaded on the first certificate to check, then kept.
#[derive(Debug)]
struct SystemTrust {
    provider: Arc<CryptoProvider>,
    store: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl SystemTrust {
    fn store(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        let loaded = self
            .store
            .get_or_init(|| rustls_platform_verifier::Verifier::new(self.provider.clone()));
        // A store with no CA in it (none installed, SSL_CERT_FILE naming no
        // certificate) trusts no server: said as an untrusted certificate,
        // whose hint names the store and SSL_CERT_FILE.
        loaded.as_ref().map_err(|error| {
            rustls::Error::InvalidCertificate(rustls::CertificateError::Other(rustls::OtherError(
                Arc::new(error.clone()),
            )))
        })
    }
}

impl ServerCertVerifier for SystemTrust {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.store()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    // The handshake's signatures need no store: checked as the platform
    // verifier's own WebPKI verifier does, with the provider's algorithms.
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

pub(in crate::backends) fn client(timing: &Timing) -> reqwest::Client {
    builder()
        .connect_timeout(timing.request)
        // Only the configured URL is ever contacted: no redirect is
        // followed, and no proxy from the environment (it would see the
        // password and every answer) is used; the event stream over
        // `http://` connects directly too (h1.rs).
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .expect("reqwest client with static settings")
}

/// What a server answered, body read (within [`MAX_BODY`]).
pub(in crate::backends) struct Answered {
    pub status: u16,
    pub content_type: String,
    pub body: bytes::Bytes,
}

impl Peer {
    /// Sends a request within the request bound and reads the body.
    pub async fn exchange(
        &self,
        timing: &Timing,
        request: reqwest::RequestBuilder,
    ) -> Result<Answered, BackendError> {
        let exchange = async {
            let response = request.send().await?;
            let status = response.status().as_u16();
            let content_type = content_type(&response);
            // Sized once from the announced length (bounded: it is the
            // server's word), not regrown and copied for a large listing.
            let announced = response.content_length().unwrap_or(0) as usize;
            let mut body = Vec::with_capacity(announced.min(MAX_BODY));
            let mut chunks = response.bytes_stream();
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk?;
                if body.len() + chunk.len() > MAX_BODY {
                    return Ok(Err(self.server_error(
                        status,
                        format!("the response is over the {} MiB bound", MAX_BODY >> 20),
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>(Ok(Answered {
                status,
                content_type,
                body: body.into(),
            }))
        };
        match tokio::time::timeout(timing.request, exchange).await {
            Err(_) => Err(BackendError::Timeout {
                server: self.label.clone(),
                after: timing.request,
            }),
            Ok(Err(error)) => Err(self.unreachable(&error)),
            Ok(Ok(answered)) => {
                let answered = answered?;
                match answered.status {
                    401 | 403 => Err(BackendError::Unauthorized {
                        server: self.label.clone(),
                        advice: self.expected.auth_advice(),
                    }),
                    status @ 300..=399 => Err(BackendError::Redirect {
                        server: self.label.clone(),
                        status,
                    }),
                    _ => Ok(answered),
                }
            }
        }
    }

    pub fn unreachable(&self, error: &reqwest::Error) -> BackendError {
        self.not_connected(cause(error), untrusted_certificate(error))
    }

    /// The server could not be reached, for `reason` ("connection refused");
    /// `untrusted_certificate` when TLS refused its certificate.
    pub fn not_connected(&self, cause: Cause, untrusted_certificate: bool) -> BackendError {
        let hint = if untrusted_certificate {
            ConnectHint::UntrustedCertificate
        } else {
            ConnectHint::Start(self.expected.start_hint())
        };
        BackendError::Connect {
            server: self.label.clone(),
            cause,
            hint,
        }
    }

    pub fn server_error(
        &self,
        status: u16,
        message: impl Into<crate::text::Cut<'static>>,
    ) -> BackendError {
        BackendError::Server {
            server: self.label.clone(),
            status,
            message: message.into(),
        }
    }

    pub fn not_json(&self, status: u16, content_type: &str) -> BackendError {
        BackendError::NotJson {
            server: self.label.clone(),
            status,
            kind: if content_type.contains("html") {
                BodyKind::Html
            } else {
                BodyKind::Other(content_type.to_owned())
            },
            expected: self.expected,
        }
    }
}

/// The response's `Content-Type`, empty when it has none.
pub(in crate::backends) fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// The innermost cause of a reqwest error ("connection refused"): the outer
/// layers repeat the URL and say "error sending request".
pub(in crate::backends) fn cause(error: &reqwest::Error) -> Cause {
    if error.is_timeout() {
        return Cause::TimedOut;
    }
    let mut inner: &dyn std::error::Error = error;
    while let Some(source) = inner.source() {
        inner = source;
    }
    Cause::said(&inner.to_string())
}

/// Whether `error` is rustls refusing the server's certificate (an unknown
/// CA, a wrong name, an expired one), found by type along its causes.
fn untrusted_certificate(error: &reqwest::Error) -> bool {
    let mut inner: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = inner {
        if let Some(rustls::Error::InvalidCertificate(_)) = error.downcast_ref() {
            return true;
        }
        // An `io::Error`'s `source()` skips the error it wraps: rustls's
        // reaches hyper inside one.
        inner = match error.downcast_ref::<std::io::Error>() {
            Some(io) => io.get_ref().map(|wrapped| wrapped as _),
            None => error.source(),
        };
    }
    false
}

/// The answer of an API whose every answer is JSON (OpenCode's): a JSON 404
/// is "not found", a 400 carries the server's message, and anything else
/// that is not JSON (a web app's HTML page for an unknown route) is named
/// for what it is instead of being read as a success. 204 has no body.
pub(in crate::backends) fn json_answer(
    peer: &Peer,
    answered: Answered,
) -> Result<Answered, BackendError> {
    let is_json = serde_json::from_slice::<serde::de::IgnoredAny>(&answered.body).is_ok();
    // Read for the message alone: an error body of 16 MiB builds no tree.
    let message = || {
        use serde_json::value::RawValue;
        #[derive(serde::Deserialize)]
        struct Said<'a> {
            #[serde(borrow)]
            message: Option<&'a RawValue>,
            #[serde(borrow)]
            data: Option<&'a RawValue>,
        }
        let text = |raw: &RawValue| serde_json::from_str::<String>(raw.get()).ok();
        let said = serde_json::from_slice::<Said>(&answered.body).ok();
        said.and_then(|said| {
            let inner = said
                .data
                .and_then(|data| serde_json::from_str::<Said>(data.get()).ok())
                .and_then(|data| data.message.and_then(text));
            inner.or_else(|| said.message.and_then(text))
        })
        .map(|m| crate::text::cut_for_display(&m, crate::text::DISPLAY_MESSAGE_CHARS).into_owned())
        .unwrap_or_default()
    };
    match answered.status {
        204 => Ok(answered),
        404 if is_json => Err(BackendError::NotFound {
            server: peer.label.clone(),
        }),
        400 => Err(BackendError::BadRequest {
            server: peer.label.clone(),
            message: message(),
        }),
        status if !is_json => Err(peer.not_json(status, &answered.content_type)),
        200..=299 => Ok(answered),
        status => Err(peer.server_error(status, message())),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use tokio_rustls::TlsAcceptor;
    use tokio_rustls::rustls::ServerConfig;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

    use super::*;

    pub(in crate::backends::net) fn peer() -> Peer {
        Peer {
            label: ServerLabel::OpenCode {
                url: "http://127.0.0.1:4096".into(),
            },
            expected: Expected::OpenCode,
        }
    }

    /// A TLS server whose certificate a private CA (tests/fixtures/tls),
    /// in no trust store, signed: its URL.
    pub(in crate::backends::net) async fn untrusted_tls_server() -> String {
        let fixture = |name| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/tls")
                .join(name)
        };
        let certs = CertificateDer::pem_file_iter(fixture("server.pem"))
            .expect("server.pem")
            .collect::<Result<Vec<_>, _>>()
            .expect("certificates");
        let key = PrivateKeyDer::from_pem_file(fixture("server.key")).expect("server.key");
        let config =
            ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("TLS versions")
                .with_no_client_auth()
                .with_single_cert(certs, key)
                .expect("server certificate");
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                // The client refuses the handshake: nothing to serve.
                let _ = acceptor.accept(tcp).await;
            }
        });
        format!("https://127.0.0.1:{port}/")
    }

    async fn failure(url: &str) -> BackendError {
        let error = client(&Timing::default())
            .get(url)
            .send()
            .await
            .expect_err("no connection");
        peer().unreachable(&error)
    }

    #[tokio::test]
    async fn an_untrusted_certificate_names_the_ca_and_only_it() {
        let BackendError::Connect { cause, hint, .. } =
            failure(&untrusted_tls_server().await).await
        else {
            panic!("not a connect error");
        };
        assert_eq!(hint, ConnectHint::UntrustedCertificate, "{cause:?}");
        assert!(
            matches!(&cause, Cause::Said(said) if said.starts_with("invalid peer certificate")),
            "{cause:?}"
        );

        // Nothing listens on a port just freed: refused, not a certificate.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        for url in [
            format!("https://127.0.0.1:{port}/"),
            format!("http://127.0.0.1:{port}/"),
        ] {
            let BackendError::Connect { cause, hint, .. } = failure(&url).await else {
                panic!("not a connect error");
            };
            assert_eq!(
                hint,
                ConnectHint::Start(crate::backends::StartHint::OpenCodeServe),
                "{cause:?}"
            );
        }
    }

    /// A long message from the server is kept cut, as facts: the note of
    /// what the cut hid is worded where it is shown, in the person's
    /// language (#45: it was English here, below the presentation floor).
    #[test]
    fn a_long_server_message_keeps_its_cut_for_the_presentation() {
        let said = "错".repeat(crate::text::DISPLAY_MESSAGE_CHARS + 100);
        let body = serde_json::json!({ "message": said }).to_string();
        for status in [400, 500] {
            let answered = Answered {
                status,
                content_type: "application/json".into(),
                body: body.clone().into(),
            };
            let Err(error) = json_answer(&peer(), answered) else {
                panic!("{status} is a failure")
            };
            let facts = format!("{error:?}");
            assert!(!facts.contains("more characters"), "{facts}");
            assert!(facts.contains("hidden: 100"), "{facts}");
        }
    }
}
