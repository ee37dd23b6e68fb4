//! Plumbing the adapters share: the HTTP exchange ([`http`]), the HTTP/1.1
//! event reader ([`h1`]), the event-stream loop with reconnect, backoff and
//! stall watchdog ([`stream`]), the SSE decoder ([`sse`]) and the reader of
//! a server's published OpenAPI description ([`openapi`]).

pub(crate) mod h1;
pub(crate) mod http;
pub(crate) mod openapi;
pub(crate) mod sse;
pub(crate) mod stream;
