"""Run inside the namespace: a loopback TCP port in front of the proxy's unix socket.

``python bridge.py SOCKET -- COMMAND...`` listens on 127.0.0.1, forks a server that joins
each connection to ``SOCKET``, points the proxy variables at the port and execs COMMAND.
The namespace ends with COMMAND, and the server with it. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading


def _join(a: socket.socket, b: socket.socket) -> None:
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        conn, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            conn.close()
            continue
        threading.Thread(target=_join, args=(conn, upstream), daemon=True).start()
        threading.Thread(target=_join, args=(upstream, conn), daemon=True).start()


def main(argv: list[str]) -> None:
    path, sep, command = argv[0], argv[1], argv[2:]
    if sep != "--" or not command:
        sys.exit("usage: bridge.py SOCKET -- COMMAND...")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        _serve(listener, path)
        os._exit(0)
    listener.close()
    proxy = f"http://127.0.0.1:{port}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        os.environ[name] = proxy
    for name in ("NO_PROXY", "no_proxy"):
        os.environ.pop(name, None)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
