"""A small asyncio HTTP/1.1 client for load generators: one keep-alive connection per
virtual user, every request bounded by a timeout, failures raised as TRANSPORT errors."""

import asyncio
import json


class HttpError(Exception):
    pass


class Conn:
    """One keep-alive HTTP/1.1 connection; reopened after an error or `Connection: close`."""

    def __init__(self, port):
        self.port = port
        self.r = self.w = None

    async def close(self):
        if self.w:
            self.w.close()
            try:
                await self.w.wait_closed()
            except OSError:
                pass
        self.r = self.w = None

    async def open(self):
        if self.w is None:
            self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)

    async def request(self, method, path, body=None, headers=(), timeout=30.0):
        """(status, body bytes). Raises HttpError / OSError / TimeoutError on failure."""
        data = b"" if body is None else json.dumps(body).encode()
        head = ["%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n"
                % (method, path, len(data))]
        if data:
            head.append("Content-Type: application/json\r\n")
        for k, v in headers:
            head.append("%s: %s\r\n" % (k, v))
        head.append("\r\n")
        try:
            async with asyncio.timeout(timeout):
                await self.open()
                self.w.write("".join(head).encode() + data)
                raw = await self.r.readuntil(b"\r\n\r\n")
                lines = raw.decode("latin-1").split("\r\n")
                status = int(lines[0].split(" ", 2)[1])
                length, chunked, close = None, False, False
                for line in lines[1:]:
                    k, _, v = line.partition(":")
                    k = k.strip().lower()
                    if k == "content-length":
                        length = int(v)
                    elif k == "transfer-encoding" and "chunked" in v.lower():
                        chunked = True
                    elif k == "connection" and "close" in v.lower():
                        close = True
                if chunked:
                    parts = []
                    for _ in range(100000):
                        n = int((await self.r.readline()).split(b";")[0], 16)
                        chunk = await self.r.readexactly(n + 2)
                        if n == 0:
                            break
                        parts.append(chunk[:-2])
                    payload = b"".join(parts)
                elif length is not None:
                    payload = await self.r.readexactly(length)
                else:
                    payload = await self.r.read()
                    close = True
        except BaseException:
            await self.close()
            raise
        if close:
            await self.close()
        return status, payload


# What a failed request can raise: counted as an error, never fatal to the run.
TRANSPORT = (OSError, HttpError, asyncio.TimeoutError, asyncio.IncompleteReadError,
             asyncio.LimitOverrunError, ValueError)


def error_code(payload):
    try:
        return json.loads(payload).get("error", "?")
    except (ValueError, AttributeError):
        return "?"
