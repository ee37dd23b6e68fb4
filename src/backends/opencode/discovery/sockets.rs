//! The listening sockets of the user's processes, as `/proc` shows them:
//! a process's open files (`/proc/PID/fd/*` → `socket:[inode]`) matched to
//! the listening entries of `/proc/net/tcp` and `tcp6`.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

/// Open files looked at per process, and socket table lines read.
const MAX_FDS: usize = 1 << 16;
const MAX_SOCKETS: usize = 1 << 20;

/// The process table as discovery reads it.
pub(super) struct Table<'a> {
    pub path: &'a Path,
    /// The user's id.
    pub me: u32,
    /// Listening TCP sockets by inode.
    pub listening: HashMap<u64, SocketAddr>,
}

impl Table<'_> {
    pub fn is_mine(&self, pid: u32) -> bool {
        owner(&self.path.join(pid.to_string())) == Some(self.me)
    }

    /// The addresses process `pid` listens on at `port`: its open sockets
    /// found among the listening ones.
    pub fn listens(&self, pid: u32, port: u16) -> Vec<IpAddr> {
        let Ok(fds) = std::fs::read_dir(self.path.join(pid.to_string()).join("fd")) else {
            return Vec::new();
        };
        let mut addresses: Vec<IpAddr> = fds
            .take(MAX_FDS)
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .filter_map(|target| socket_inode(target.to_str()?))
            .filter_map(|inode| self.listening.get(&inode))
            .filter(|address| address.port() == port)
            .map(|address| canonical(address.ip()))
            .collect();
        // IPv4 first: one process, one URL, the same every time.
        addresses.sort_by_key(|ip| (ip.is_ipv6(), *ip));
        addresses
    }
}

/// `socket:[12345]`, as `/proc/*/fd/*` links name sockets.
fn socket_inode(target: &str) -> Option<u64> {
    target
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The listening sockets of `/proc/net/tcp` and `tcp6`, by inode.
pub(super) fn listening(table: &Path) -> HashMap<u64, SocketAddr> {
    use std::io::BufRead;
    let mut sockets = HashMap::new();
    for name in ["net/tcp", "net/tcp6"] {
        let Ok(file) = std::fs::File::open(table.join(name)) else {
            continue;
        };
        let lines = std::io::BufReader::new(file)
            .lines()
            .skip(1)
            .take(MAX_SOCKETS);
        sockets.extend(
            lines
                .map_while(Result::ok)
                .filter_map(|l| listening_socket(&l)),
        );
    }
    sockets
}

/// One line of `/proc/net/tcp{,6}`, when it is a listening socket:
/// `sl local_address rem_address st … inode …`, the address in hex as the
/// kernel holds it (32-bit words in host order), the port in hex.
fn listening_socket(line: &str) -> Option<(u64, SocketAddr)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    const LISTEN: &str = "0A";
    if fields.get(3) != Some(&LISTEN) {
        return None;
    }
    let (address, port) = fields.get(1)?.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let inode = fields.get(9)?.parse().ok()?;
    let word = |i: usize| {
        address
            .get(i * 8..i * 8 + 8)
            .and_then(|w| u32::from_str_radix(w, 16).ok())
            .map(u32::to_ne_bytes)
    };
    let ip = match address.len() {
        8 => IpAddr::from(word(0)?),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::from(bytes)
        }
        _ => return None,
    };
    Some((inode, SocketAddr::new(ip, port)))
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is the IPv4 one.
pub(super) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Where a socket listening on `socket` is reached on loopback: its own
/// loopback address, or for the unspecified address that of its family.
pub(super) fn loopback_of(socket: IpAddr) -> Option<IpAddr> {
    match socket {
        ip if ip.is_loopback() => Some(ip),
        IpAddr::V4(ip) if ip.is_unspecified() => Some(Ipv4Addr::LOCALHOST.into()),
        IpAddr::V6(ip) if ip.is_unspecified() => Some(Ipv6Addr::LOCALHOST.into()),
        _ => None,
    }
}

/// Whether a socket listening on `socket` is the one `wanted` reaches. An
/// IPv6 socket on `::` may or may not take IPv4 too (`IPV6_V6ONLY`, which
/// `/proc` does not show): it is not counted for an IPv4 address.
pub(super) fn reaches(socket: IpAddr, wanted: IpAddr) -> bool {
    socket == wanted || (loopback_of(socket) == Some(wanted) && socket.is_unspecified())
}

/// The user owning a file (a process, under `/proc`); none off Unix.
#[cfg(unix)]
pub(super) fn owner(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.uid())
}

#[cfg(not(unix))]
pub(super) fn owner(_: &Path) -> Option<u32> {
    None
}

#[cfg(test)]
pub(super) fn hex6(ip: Ipv6Addr) -> String {
    ip.octets()
        .chunks(4)
        .map(|w| format!("{:08X}", u32::from_ne_bytes(w.try_into().unwrap())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_lines_as_the_kernel_writes_them() {
        let line = |local: &str, state: &str| {
            format!(
                "   0: {local} 00000000:0000 {state} 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0"
            )
        };
        let v4_loopback = format!("{:08X}:1F90", u32::from_ne_bytes([127, 0, 0, 1]));
        assert_eq!(
            listening_socket(&line(&v4_loopback, "0A")),
            Some((4242, "127.0.0.1:8080".parse().unwrap()))
        );
        assert_eq!(
            listening_socket(&line(&v4_loopback, "01")),
            None,
            "established"
        );
        assert_eq!(
            listening_socket(&line(&format!("{}:0050", hex6(Ipv6Addr::LOCALHOST)), "0A")),
            Some((4242, "[::1]:80".parse().unwrap()))
        );
        for broken in [
            "",
            "  sl  local_address",
            &line("zz:1", "0A"),
            &line("0100007F", "0A"),
        ] {
            assert_eq!(listening_socket(broken), None, "{broken}");
        }
        assert_eq!(
            canonical("::ffff:127.0.0.1".parse().unwrap()),
            IpAddr::from([127, 0, 0, 1])
        );
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(reaches(ip("0.0.0.0"), ip("127.0.0.1")));
        assert!(reaches(ip("::"), ip("::1")));
        assert!(!reaches(ip("::"), ip("127.0.0.1")), "IPV6_V6ONLY unknown");
        assert!(!reaches(ip("::1"), ip("127.0.0.1")));
        assert!(!reaches(ip("127.0.0.1"), ip("::1")));
    }

    /// The real `/proc`: this process's own listener on `::1` is found there,
    /// at its address.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_listener_of_this_process_is_found_in_proc() {
        let Ok(listener) = std::net::TcpListener::bind("[::1]:0") else {
            return; // no IPv6 loopback here
        };
        let port = listener.local_addr().unwrap().port();
        let processes = Path::new("/proc");
        let table = Table {
            path: processes,
            me: owner(&processes.join("self")).unwrap(),
            listening: listening(processes),
        };
        assert_eq!(
            table.listens(std::process::id(), port),
            vec![IpAddr::from(Ipv6Addr::LOCALHOST)]
        );
        assert!(table.listens(1, port).is_empty());
    }
}
