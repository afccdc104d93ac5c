//! [`Proxy`]: a loopback TCP proxy in front of a server that, when told to, forwards
//! one chosen command and then cuts the client's connection before the reply reaches
//! it: the server ran the command, the client lost its answer. The lost-reply tests
//! of the Redis client cut a rebuild's switch this way.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What the proxy's threads share.
#[derive(Default)]
struct Shared {
    /// Cut the connection that sends a command containing these bytes.
    armed: Mutex<Option<Vec<u8>>>,
    /// Connections cut so far.
    cuts: AtomicUsize,
    stop: AtomicBool,
}

/// A loopback proxy to `127.0.0.1:<target>`, stopped when dropped.
pub struct Proxy {
    port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards every connection to `target`.
    ///
    /// # Panics
    ///
    /// If no loopback port can be bound.
    pub fn start(target: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound address").port();
        let shared = Arc::new(Shared::default());
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if shared.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let (Ok(client), Ok(server)) =
                        (client, TcpStream::connect(("127.0.0.1", target)))
                    else {
                        continue;
                    };
                    forward(client, server, Arc::clone(&shared));
                }
            })
        };
        Proxy {
            port,
            shared,
            accept: Some(accept),
        }
    }

    /// `redis://127.0.0.1:<proxy port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The next command a client sends that contains `pattern` reaches the server, and
    /// then that client's connection is closed before any reply reaches it.
    ///
    /// # Panics
    ///
    /// If a proxy thread panicked while holding the pattern.
    pub fn cut_reply_of(&self, pattern: &[u8]) {
        *self.shared.armed.lock().expect("the proxy's lock") = Some(pattern.to_vec());
    }

    /// How many connections were cut so far.
    pub fn cuts(&self) -> usize {
        self.shared.cuts.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Copies client → server and server → client on two threads; the first cuts the
/// connection after forwarding a command that holds the armed pattern, the second
/// then drops every reply.
fn forward(client: TcpStream, server: TcpStream, shared: Arc<Shared>) {
    let cut = Arc::new(AtomicBool::new(false));
    let (mut client_in, mut server_out) = (
        client.try_clone().expect("clone the client socket"),
        server.try_clone().expect("clone the server socket"),
    );
    {
        let (shared, cut, client) = (
            Arc::clone(&shared),
            Arc::clone(&cut),
            client.try_clone().expect("clone"),
        );
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            // The tail of what came before, so a pattern split over two reads is seen.
            let mut window: Vec<u8> = Vec::new();
            while let Ok(n) = client_in.read(&mut buf) {
                if n == 0 {
                    break;
                }
                window.extend_from_slice(&buf[..n]);
                let hit = {
                    let mut armed = shared.armed.lock().expect("the proxy's lock");
                    let hit = armed
                        .as_ref()
                        .is_some_and(|p| window.windows(p.len()).any(|w| w == p.as_slice()));
                    if hit {
                        *armed = None;
                    }
                    hit
                };
                if hit {
                    // Counted before anything can close the client's side: the other
                    // thread shuts it once it sees `cut`, and a test that then reads
                    // `cuts()` must find this one.
                    shared.cuts.fetch_add(1, Ordering::SeqCst);
                    cut.store(true, Ordering::SeqCst);
                }
                if server_out.write_all(&buf[..n]).is_err() {
                    break;
                }
                if hit {
                    let _ = client.shutdown(Shutdown::Both);
                    break;
                }
                let keep = window.len().saturating_sub(4096);
                window.drain(..keep);
            }
            let _ = server_out.shutdown(Shutdown::Write);
        });
    }
    std::thread::spawn(move || {
        let (mut server_in, mut client_out) = (server, client);
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = server_in.read(&mut buf) {
            if n == 0 || cut.load(Ordering::SeqCst) {
                break;
            }
            if client_out.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = client_out.shutdown(Shutdown::Both);
    });
}
