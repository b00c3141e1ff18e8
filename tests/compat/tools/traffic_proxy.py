"""A logging TCP proxy for seeing what a client library sends and what the server replies.

latchd has no MONITOR, so to debug a compat test put this between the library and the server:

    python3 traffic_proxy.py --target-port 6390 --log /tmp/traffic.log
    # prints the port it listens on (127.0.0.1, picked by the kernel), then forwards until killed

The compat test helpers start it themselves when COMPAT_TRAFFIC_LOG names a file, e.g.
    COMPAT_TRAFFIC_LOG=/tmp/t.log ctest -R compat.redlock.latchd

Each chunk is logged as one line: a monotonic timestamp, the server port, the connection number
(per proxy), the direction
(">" client to server, "<" server to client) and the bytes as a Python bytes literal, so CR LF
and binary data stay visible. Debugging aid only: no test depends on its output.
"""

import argparse
import socket
import sys
import threading
import time


class TrafficLog:
    def __init__(self, path, target_port):
        self._target_port = target_port
        self._file = open(path, "a", buffering=1, encoding="utf-8")
        self._guard = threading.Lock()

    def write(self, connection, direction, data):
        line = f"{time.monotonic():.6f} :{self._target_port} #{connection} {direction} {data!r}\n"
        with self._guard:
            self._file.write(line)


def _pump(source, sink, log, connection, direction):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            log.write(connection, direction, data)
            sink.sendall(data)
    except OSError:
        pass
    finally:
        log.write(connection, direction, b"<closed>")
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(listener, target_port, log):
    connection = 0
    while True:
        client, _ = listener.accept()
        connection += 1
        try:
            server = socket.create_connection(("127.0.0.1", target_port), timeout=5)
            server.settimeout(None)
        except OSError as error:
            log.write(connection, "!", f"connect failed: {error}".encode())
            client.close()
            continue
        for source, sink, direction in ((client, server, ">"), (server, client, "<")):
            threading.Thread(target=_pump, args=(source, sink, log, connection, direction),
                             daemon=True).start()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target-port", type=int, required=True)
    parser.add_argument("--log", required=True)
    arguments = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    serve(listener, arguments.target_port, TrafficLog(arguments.log, arguments.target_port))


if __name__ == "__main__":
    sys.exit(main())
