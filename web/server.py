#!/usr/bin/env python3
"""Serves web/ on the loopback interface, with .wasm as application/wasm and no caching.

    python3 web/server.py [--port 8000] [--port-file FILE] [--quiet]
                          [--timeout SECONDS] [--max-connections N]

--port 0 picks a free port; --port-file writes the chosen port there once listening.

A good local citizen: only regular files inside web/ are served (a symlink may point within
web/, never out of it; a directory serves its index.html, never a listing); a request whose
Host header is not this server's loopback address (127.0.0.1, localhost or [::1], with the
port) is refused, so a web page elsewhere cannot reach it through DNS rebinding; a NUL or an
undecodable escape in the path is a 400; every response says X-Content-Type-Options: nosniff,
and Cross-Origin-Opener-Policy / Cross-Origin-Embedder-Policy, so the page is cross-origin
isolated (the worker pool shares memory with its workers).
Start-up errors (port in use, unwritable port file) are one line on stderr and exit 1.

Bounded: a connection that has not finished within --timeout seconds (default 10; idle, or
sending its request a byte at a time) is closed; at most --max-connections (default 64) are
served at once, and the next ones get a 503 at once instead of a thread each; when the process
runs out of file descriptors, the accept loop backs off (up to a second) instead of spinning.
"""
import argparse
import errno
import http.server
import os
import posixpath
import socket
import stat
import sys
import threading
import time
import urllib.parse

ROOT = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".npy": "application/octet-stream",
    }
    quiet = False
    allowed_hosts = frozenset()
    # Seconds a connection may take in all (set from --timeout); also each read's limit.
    timeout = 10.0

    def setup(self):
        super().setup()
        # The whole connection's deadline: a request trickled in a byte at a time resets no
        # per-read timeout forever. Shutting the socket down ends the handler's read.
        self._deadline = threading.Timer(self.timeout, self._expire)
        self._deadline.daemon = True
        self._deadline.start()

    def _expire(self):
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def finish(self):
        self._deadline.cancel()
        try:
            super().finish()
        except OSError:
            pass

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=ROOT, **kwargs)

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        # Cross-origin isolated (everything is same-origin): the worker pool shares the
        # original space with its workers through a SharedArrayBuffer instead of copying it.
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, fmt, *args):
        if not self.quiet:
            super().log_message(fmt, *args)

    def list_directory(self, path):
        # Never reached through send_head below; refused should anything else call it.
        self.send_error(404, "File not found")
        return None

    def resolve(self):
        """The real path of the regular file under ROOT that the request names, or an HTTP
        status (400, 404) saying why there is none."""
        raw = urllib.parse.urlsplit(self.path).path
        try:
            path = urllib.parse.unquote(raw, errors="strict")
        except UnicodeDecodeError:
            return 400
        if "\x00" in path:
            return 400
        if path.endswith("/"):
            path += "index.html"
        parts = [p for p in posixpath.normpath(path).split("/") if p not in ("", ".", "..")]
        real = os.path.realpath(os.path.join(ROOT, *parts))
        if os.path.commonpath([real, ROOT]) != ROOT:
            return 404
        try:
            st = os.stat(real)
        except (OSError, ValueError):
            return 404
        if stat.S_ISDIR(st.st_mode):
            index = os.path.join(real, "index.html")
            if os.path.isfile(index) and os.path.commonpath([os.path.realpath(index), ROOT]) == ROOT:
                return os.path.realpath(index)
            return 404
        return real if stat.S_ISREG(st.st_mode) else 404

    def send_head(self):
        if self.headers.get("Host", "").lower() not in self.allowed_hosts:
            self.send_error(403, "Unexpected Host header")
            return None
        target = self.resolve()
        if target == 400:
            self.send_error(400, "Bad path")
            return None
        if target == 404:
            self.send_error(404, "File not found")
            return None
        try:
            f = open(target, "rb")
        except OSError:
            self.send_error(404, "File not found")
            return None
        try:
            st = os.fstat(f.fileno())
            self.send_response(200)
            self.send_header("Content-type", self.guess_type(target))
            self.send_header("Content-Length", str(st.st_size))
            self.send_header("Last-Modified", self.date_time_string(st.st_mtime))
            self.end_headers()
            return f
        except Exception:
            f.close()
            raise


class Server(http.server.ThreadingHTTPServer):
    """ThreadingHTTPServer with a bounded number of connections served at once and an accept
    loop that backs off when descriptors run out."""

    daemon_threads = True
    max_connections = 64
    request_queue_size = 64
    # Seconds the accept loop waits after running out of descriptors: doubled up to a second
    # while it lasts, reset by the next accepted connection.
    backoff = 0.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.slots = threading.BoundedSemaphore(self.max_connections)

    def get_request(self):
        try:
            request = super().get_request()
        except OSError as e:
            if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                self.backoff = min(1.0, max(0.01, 2 * self.backoff))
                time.sleep(self.backoff)
            raise
        self.backoff = 0.0
        return request

    def process_request(self, request, client_address):
        if not self.slots.acquire(blocking=False):
            # Full: a 503 at once (no thread), and the connection closed.
            try:
                request.settimeout(1.0)
                request.sendall(
                    b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\n"
                    b"Connection: close\r\nX-Content-Type-Options: nosniff\r\n\r\n"
                )
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def handle_error(self, request, client_address):
        # A client that went away or timed out (reset, broken pipe) is not the server's error.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--port-file")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--max-connections", type=int, default=64)
    args = ap.parse_args()
    if not (args.timeout > 0 and args.max_connections > 0):
        print("faithful web: --timeout and --max-connections must be positive", file=sys.stderr)
        return 1
    Handler.quiet = args.quiet
    Handler.timeout = args.timeout
    Server.max_connections = args.max_connections
    try:
        server = Server(("127.0.0.1", args.port), Handler)
    except (OSError, OverflowError) as e:
        print(f"faithful web: cannot listen on 127.0.0.1:{args.port}: {e}", file=sys.stderr)
        return 1
    port = server.server_address[1]
    Handler.allowed_hosts = frozenset(f"{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]"))
    if args.port_file:
        tmp = args.port_file + ".tmp"
        try:
            with open(tmp, "w") as f:
                f.write(f"{port}\n")
            os.replace(tmp, args.port_file)
        except OSError as e:
            print(f"faithful web: cannot write the port file {args.port_file}: {e}", file=sys.stderr)
            server.server_close()
            return 1
    print(f"faithful web: serving {ROOT} at http://127.0.0.1:{port}/", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
