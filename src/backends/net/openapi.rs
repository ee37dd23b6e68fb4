//! A server's OpenAPI description (`GET /doc`), read for the routes it
//! offers: OpenCode 1.18.34 (its new session engine) and OpenCode 2 publish
//! one, and both adapters choose routes from it. Only the path keys and
//! their methods are kept.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::http;

/// The largest description read (1.18.34's is 479 KB).
const MAX_DOC: usize = 8 << 20;

/// The routes a description names: path template → methods (lower case).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Paths(HashMap<String, HashSet<String>>);

impl Paths {
    /// From an OpenAPI description's text; `None` when it is not one.
    pub(crate) fn parse(doc: &[u8]) -> Option<Paths> {
        #[derive(Deserialize)]
        struct Doc {
            paths: HashMap<String, HashMap<String, IgnoredAny>>,
        }
        let doc: Doc = serde_json::from_slice(doc).ok()?;
        Some(Paths(
            doc.paths
                .into_iter()
                .map(|(path, methods)| (path, methods.into_keys().collect()))
                .collect(),
        ))
    }

    pub(crate) fn has(&self, path: &str) -> bool {
        self.0.contains_key(path)
    }

    pub(crate) fn has_method(&self, path: &str, method: &str) -> bool {
        self.0.get(path).is_some_and(|m| m.contains(method))
    }
}

/// Reads `/doc` within [`MAX_DOC`]: `Ok(Some)` for a description,
/// `Ok(None)` when the server has none (404, or a web page), an error when
/// there is no answer to go by now (unreachable, slow, 5xx).
pub(crate) async fn read(request: reqwest::RequestBuilder) -> Result<Option<Paths>, String> {
    let mut response = request
        .send()
        .await
        .map_err(|e| http::cause(&e).to_string())?;
    let status = response.status().as_u16();
    if !matches!(status, 200 | 404) {
        return Err(format!("answered {status}"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| http::cause(&e).to_string())?
    {
        if body.len() + chunk.len() > MAX_DOC {
            return Err(format!("over the {} MiB bound", MAX_DOC >> 20));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Paths::parse(&body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_their_methods_come_from_the_description() {
        let doc = br#"{"openapi":"3.1.0","paths":{"/api/form":{"get":{}},"/api/session/{sessionID}/form/{formID}":{"get":{},"delete":{}}}}"#;
        let paths = Paths::parse(doc).expect("a description");
        assert!(paths.has("/api/form"));
        assert!(paths.has_method("/api/session/{sessionID}/form/{formID}", "delete"));
        assert!(!paths.has_method("/api/form", "delete"));
        assert_eq!(Paths::parse(b"<html>app</html>"), None);
        assert_eq!(Paths::parse(br#"{"paths":[]}"#), None);
    }
}
