//! The configured servers: their backends, the tasks following them, and
//! what each connection last said.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::ServerStatus;
use crate::backends::sink::{self, Queued};
use crate::backends::{Backend, BackendError, BackendEvent, Factory};
use crate::settings::{BackendKind, ServerSpec, UrlSource};

struct Server {
    spec: ServerSpec,
    backend: Arc<dyn Backend>,
    task: JoinHandle<()>,
    connected: bool,
    error: Option<BackendError>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a connection change means for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Transition {
    Same,
    /// First connection.
    Connected,
    /// It worked (or had not failed yet) and now fails: worth telling.
    Lost,
    /// Still failing, for another reason: worth telling.
    StillDown,
    /// It works again.
    Restored,
}

pub(super) struct Registry {
    servers: HashMap<Arc<str>, Server>,
    factory: Factory,
    /// Where every backend's events go, tagged with the server's name.
    events: mpsc::UnboundedSender<(Arc<str>, Queued<BackendEvent>)>,
}

impl Registry {
    pub fn new(
        factory: Factory,
        events: mpsc::UnboundedSender<(Arc<str>, Queued<BackendEvent>)>,
    ) -> Self {
        Registry {
            servers: HashMap::new(),
            factory,
            events,
        }
    }

    /// Makes the running servers match `specs`: unchanged ones keep running,
    /// changed or removed ones stop. Returns the names of those that stopped.
    pub fn reconcile(&mut self, specs: Vec<ServerSpec>) -> Vec<Arc<str>> {
        let stopped: Vec<Arc<str>> = self
            .servers
            .iter()
            .filter(|(name, server)| !specs.iter().any(|s| s.name == **name && *s == server.spec))
            .map(|(name, _)| name.clone())
            .collect();
        for name in &stopped {
            self.servers.remove(name);
        }
        for spec in specs {
            if !self.servers.contains_key(&spec.name) {
                self.start(spec);
            }
        }
        stopped
    }

    fn start(&mut self, spec: ServerSpec) {
        let backend = (self.factory)(&spec);
        let (sink, mut events) = sink::channel();
        let name = spec.name.clone();
        let tagged = self.events.clone();
        let follow = backend.clone().run(sink);
        let task = tokio::spawn(async move {
            let forward = async {
                while let Some(event) = events.recv().await {
                    if tagged.send((name.clone(), event)).is_err() {
                        return;
                    }
                }
            };
            tokio::select! {
                () = follow => {}
                () = forward => {}
            }
        });
        self.servers.insert(
            spec.name.clone(),
            Server {
                spec,
                backend,
                task,
                connected: false,
                error: None,
            },
        );
    }

    pub fn backend(&self, name: &str) -> Option<Arc<dyn Backend>> {
        self.servers.get(name).map(|s| s.backend.clone())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.servers.contains_key(name)
    }

    /// Records a connection change and says what kind it was.
    pub fn set_connection(
        &mut self,
        name: &str,
        connected: bool,
        error: Option<BackendError>,
    ) -> Transition {
        let Some(server) = self.servers.get_mut(name) else {
            return Transition::Same;
        };
        if server.connected == connected && server.error == error {
            return Transition::Same; // a retry loop repeating the same failure
        }
        let was_down = server.error.is_some();
        server.connected = connected;
        server.error = error;
        match (was_down, server.error.is_some()) {
            (false, true) => Transition::Lost,
            (true, false) => Transition::Restored,
            (true, true) => Transition::StillDown,
            (false, false) => Transition::Connected,
        }
    }

    pub fn status(&self) -> Vec<ServerStatus> {
        let mut servers: Vec<ServerStatus> = self
            .servers
            .values()
            // The hook socket is not an agent server the person configured;
            // it is listed only when it cannot listen (the person must act).
            .filter(|s| !matches!(s.spec.backend, BackendKind::Hook { .. }) || s.error.is_some())
            .map(|s| ServerStatus {
                name: s.spec.name.to_string(),
                kind: s.backend.source().kind,
                url: s.spec.url.clone(),
                connected: s.connected,
                error: s.error.clone(),
                defaulted: s.spec.url_source != UrlSource::Configuration,
                discovered: match &s.spec.url_source {
                    UrlSource::Discovered(from) => Some(from.to_string()),
                    _ => None,
                },
            })
            .collect();
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        servers
    }
}
