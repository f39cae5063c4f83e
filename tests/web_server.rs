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
    let port_file = web.parent().unwrap().join("port");
    let child = Command::new(py)
        .arg(web.join("server.py"))
        .args(["--quiet", "--port", "0", "--port-file"])
        .arg(&port_file)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
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
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let host = host.map_or(String::new(), |h| format!("Host: {h}\r\n"));
    write!(s, "GET {path} HTTP/1.0\r\n{host}\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_lowercase(), body.to_string())
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
