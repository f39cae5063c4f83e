//! web/server.py is a good local citizen: only regular files under its directory (no symlinks
//! out, no listings, no FIFOs), only its own loopback Host, `X-Content-Type-Options: nosniff`,
//! a 400 for a NUL in the path, and one line for start-up errors. The server runs from a copy
//! in a scratch tree (it serves the directory it lives in), so the hostile files stay there.
//! Needs python3 (as web/serve.sh does): missing, it fails under CI=true and skips loudly
//! otherwise.
#![cfg(unix)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn python() -> Option<PathBuf> {
    let ok = Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success());
    if ok {
        return Some("python3".into());
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(!ci, "python3 is needed for web/server.py's test (CI=true)");
    eprintln!("######## web_server: SKIPPED: no python3 ########");
    None
}

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch tree: web/{server.py, index.html, app.js, sub/, inner -> index.html,
/// link -> ../secret.txt, fifo}, and secret.txt beside web/.
fn tree(dir: &Path) -> PathBuf {
    let web = dir.join("web");
    std::fs::create_dir_all(web.join("sub")).unwrap();
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/web/server.py"), web.join("server.py")).unwrap();
    std::fs::write(web.join("index.html"), "<!doctype html><title>ok</title>").unwrap();
    std::fs::write(web.join("app.js"), "export {};").unwrap();
    std::fs::write(web.join("sub/data.txt"), "in sub").unwrap();
    std::fs::write(dir.join("secret.txt"), "SECRET").unwrap();
    std::os::unix::fs::symlink("../secret.txt", web.join("link")).unwrap();
    std::os::unix::fs::symlink("index.html", web.join("inner")).unwrap();
    let fifo = std::ffi::CString::new(web.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    web
}

fn start(py: &Path, web: &Path, port: u32) -> std::process::Output {
    Command::new(py)
        .arg(web.join("server.py"))
        .args(["--quiet", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn serve(py: &Path, web: &Path) -> Server {
    serve_with(py, web, &[], None)
}

/// The server with `extra` options, and at most `max_files` open descriptors when given.
fn serve_with(py: &Path, web: &Path, extra: &[&str], max_files: Option<u64>) -> Server {
    let port_file = web.parent().unwrap().join("port");
    let _ = std::fs::remove_file(&port_file);
    let mut cmd = Command::new(py);
    cmd.arg(web.join("server.py"))
        .args(["--quiet", "--port", "0", "--port-file"])
        .arg(&port_file)
        .args(extra)
        .stderr(Stdio::null());
    if let Some(n) = max_files {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit { rlim_cur: n as libc::rlim_t, rlim_max: n as libc::rlim_t };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    let child = cmd.spawn().unwrap();
    let t0 = Instant::now();
    let mut server = Server { child, port: 0 };
    loop {
        if let Some(p) = std::fs::read_to_string(&port_file).ok().and_then(|s| s.trim().parse().ok()) {
            server.port = p;
            return server;
        }
        assert!(server.child.try_wait().unwrap().is_none(), "the server exited");
        assert!(t0.elapsed() < Duration::from_secs(20), "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// (status, headers in lower case, body) of `GET path` with the given Host header (none: `None`).
fn get(port: u16, path: &str, host: Option<&str>) -> (u16, String, String) {
    try_get(port, path, host).unwrap()
}

/// [`get`], or the error of a connection the server closed early (a 503 answered before the
/// request was read, for a client that retries).
fn try_get(port: u16, path: &str, host: Option<&str>) -> std::io::Result<(u16, String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let host = host.map_or(String::new(), |h| format!("Host: {h}\r\n"));
    write!(s, "GET {path} HTTP/1.0\r\n{host}\r\n")?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    Ok((status, head.to_lowercase(), body.to_string()))
}

#[test]
fn serves_only_regular_files_under_web_to_its_own_host() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let web = tree(dir.path());
    let srv = serve(&py, &web);
    let p = srv.port;
    let me = format!("127.0.0.1:{p}");

    let (st, head, body) = get(p, "/", Some(&me));
    assert_eq!(st, 200, "{head}");
    assert!(body.contains("<title>ok</title>"));
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    assert!(head.contains("cache-control: no-store"), "{head}");
    // Cross-origin isolated: the worker pool may share memory (SharedArrayBuffer).
    assert!(head.contains("cross-origin-opener-policy: same-origin"), "{head}");
    assert!(head.contains("cross-origin-embedder-policy: require-corp"), "{head}");
    let (st, head, _) = get(p, "/app.js", Some(&me));
    assert_eq!(st, 200);
    assert!(head.contains("content-type: text/javascript"), "{head}");
    assert_eq!(get(p, "/sub/data.txt", Some(&me)).0, 200);
    // A symlink within web/ is fine; out of it, a FIFO, a directory without index: 404.
    assert_eq!(get(p, "/inner", Some(&me)).0, 200);
    for path in ["/link", "/fifo", "/sub/", "/sub", "/../secret.txt", "/%2e%2e/secret.txt", "/missing"] {
        let (st, head, body) = get(p, path, Some(&me));
        assert_eq!(st, 404, "{path}: {head}");
        assert!(!body.contains("SECRET") && !body.contains("data.txt"), "{path}: {body}");
        assert!(head.contains("x-content-type-options: nosniff"), "{path}: {head}");
    }
    // NUL and undecodable escapes: 400, and the server lives on.
    for path in ["/%00", "/index.html%00.js", "/%ff"] {
        assert_eq!(get(p, path, Some(&me)).0, 400, "{path}");
    }
    // Only its own loopback names, with its port.
    for host in [format!("localhost:{p}"), format!("[::1]:{p}"), format!("LOCALHOST:{p}")] {
        assert_eq!(get(p, "/", Some(&host)).0, 200, "{host}");
    }
    for host in [
        Some("evil.example".to_string()),
        Some(format!("evil.example:{p}")),
        Some("127.0.0.1".into()),
        Some(format!("127.0.0.1:{}", p.wrapping_add(1))),
        None,
    ] {
        let (st, head, body) = get(p, "/", host.as_deref());
        assert_eq!(st, 403, "{host:?}: {head}");
        assert!(!body.contains("<title>ok</title>"));
    }
    assert_eq!(get(p, "/", Some(&me)).0, 200, "the server survived every request");
}

#[test]
fn start_up_errors_are_one_line() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let web = tree(dir.path());
    let srv = serve(&py, &web);
    for port in [u32::from(srv.port), 70000] {
        let out = start(&py, &web, port);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr}");
        assert!(stderr.starts_with("faithful web: cannot listen on 127.0.0.1:"), "{stderr}");
    }
    let out = Command::new(&py)
        .arg(web.join("server.py"))
        .args(["--quiet", "--port", "0", "--port-file", "/nonexistent/dir/port"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot write the port file"), "{stderr}");
}

/// Whether the server closed `s` (EOF or reset) within `within`.
fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn idle_and_trickling_connections_are_closed_after_the_timeout() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let web = tree(dir.path());
    let srv = serve_with(&py, &web, &["--timeout", "1"], None);
    let p = srv.port;
    // Idle: nothing sent.
    let mut idle = TcpStream::connect(("127.0.0.1", p)).unwrap();
    let t0 = Instant::now();
    assert!(closed_within(&mut idle, Duration::from_secs(5)), "an idle connection was held past the timeout");
    assert!(t0.elapsed() >= Duration::from_millis(500), "closed before the timeout: {:?}", t0.elapsed());
    // Trickling: one byte of the request line every 200 ms never finishes a request; the
    // connection's deadline ends it all the same.
    let mut slow = TcpStream::connect(("127.0.0.1", p)).unwrap();
    let t0 = Instant::now();
    let mut cut = false;
    for b in b"GET /index.html HTTP/1.0".iter().cycle().take(40) {
        if slow.write_all(&[*b]).is_err() {
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        if t0.elapsed() > Duration::from_secs(6) {
            break;
        }
    }
    assert!(cut || closed_within(&mut slow, Duration::from_secs(1)), "a trickling connection was held");
    assert!(t0.elapsed() < Duration::from_secs(6), "held {:?}", t0.elapsed());
    assert_eq!(get(p, "/", Some(&format!("127.0.0.1:{p}"))).0, 200, "the server still serves");
}

#[test]
fn connections_past_the_limit_get_a_503_at_once() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let web = tree(dir.path());
    let srv = serve_with(&py, &web, &["--timeout", "30", "--max-connections", "3"], None);
    let p = srv.port;
    let me = format!("127.0.0.1:{p}");
    let held: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(("127.0.0.1", p)).unwrap()).collect();
    // Give the server time to take all three.
    std::thread::sleep(Duration::from_millis(300));
    // The next connection is answered at once, before it sends anything (so no unread
    // request turns the close into a reset).
    let t0 = Instant::now();
    let mut next = TcpStream::connect(("127.0.0.1", p)).unwrap();
    next.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut raw = String::new();
    next.read_to_string(&mut raw).unwrap();
    let head = raw.to_lowercase();
    assert!(head.starts_with("http/1.0 503"), "{head}");
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    assert!(t0.elapsed() < Duration::from_secs(3), "the 503 took {:?}", t0.elapsed());
    drop(held);
    // Freed slots serve again (until the server has seen the held ones close, a try may be
    // answered 503 before its request is written: a broken pipe, tried again).
    let t0 = Instant::now();
    loop {
        let got = try_get(p, "/", Some(&me));
        if let Ok((200, _, body)) = &got {
            assert!(body.contains("<title>ok</title>"));
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "slots were not freed: {got:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// CPU seconds (user + system) the process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat (utime, stime), 12 and 13 after the name and state.
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

#[test]
fn out_of_descriptors_the_accept_loop_backs_off_and_recovers() {
    let Some(py) = python() else { return };
    if !Path::new("/proc/self/stat").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let web = tree(dir.path());
    // Few descriptors: a handful of held connections use them all up.
    let srv = serve_with(&py, &web, &["--timeout", "30"], Some(24));
    let p = srv.port;
    let pid = srv.child.id();
    let mut held = Vec::new();
    for _ in 0..40 {
        // A loaded machine accepts slowly: a connection that cannot complete in seconds means the
        // server has stopped accepting (out of descriptors, its backlog full).
        match TcpStream::connect_timeout(&std::net::SocketAddr::from(([127, 0, 0, 1], p)), Duration::from_secs(3)) {
            Ok(s) => held.push(s),
            Err(_) => break,
        }
    }
    assert!(held.len() >= 16, "only {} connections: the server never ran out of descriptors", held.len());
    std::thread::sleep(Duration::from_millis(500));
    // Out of descriptors: the server's own count is at its limit.
    let open = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count();
    assert!(open >= 22, "{open} descriptors open of 24: the limit was not reached");
    let (c0, t0) = (cpu_seconds(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let share = (cpu_seconds(pid) - c0) / t0.elapsed().as_secs_f64();
    assert!(share < 0.15, "the accept loop used {:.0} % of a core while out of descriptors", share * 100.0);
    assert!(srv.child.id() == pid);
    drop(held);
    let me = format!("127.0.0.1:{p}");
    let t0 = Instant::now();
    loop {
        let ok = TcpStream::connect(("127.0.0.1", p)).is_ok() && get(p, "/", Some(&me)).0 == 200;
        if ok {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(15), "the server did not recover");
        std::thread::sleep(Duration::from_millis(100));
    }
}
