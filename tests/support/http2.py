"""A bare HTTP/2 client connection, frame by frame, for tests that must do what a well-behaved
client library never does (open more streams than the server allows) or read what it hides
(the server's SETTINGS). Headers are sent as HPACK literals without indexing or Huffman coding,
which every decoder accepts; received header blocks are not decoded."""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
# RST_STREAM and GOAWAY error codes (RFC 9113, section 7).
PROTOCOL_ERROR, CANCEL, REFUSED_STREAM = 0x1, 0x8, 0x7


@dataclass(frozen=True)
class Frame:
    type: int
    flags: int
    stream_id: int
    payload: bytes

    def settings(self) -> dict[int, int]:
        """A SETTINGS frame's parameters, identifier -> value."""
        pairs: dict[int, int] = dict(struct.iter_unpack("!HI", self.payload))
        return pairs

    def error_code(self) -> int:
        """A RST_STREAM's (or GOAWAY's) error code."""
        offset = 4 if self.type == GOAWAY else 0
        code: int = struct.unpack_from("!I", self.payload, offset)[0]
        return code


def _length(value: bytes) -> bytes:
    assert len(value) < 127, "a literal this long needs a multi-byte length"
    return bytes([len(value)])


def header_block(headers: list[tuple[str, str]]) -> bytes:
    """`headers` as an HPACK block of literals without indexing, with new names."""
    block = b""
    for name, value in headers:
        raw_name, raw_value = name.encode(), value.encode()
        block += b"\x00" + _length(raw_name) + raw_name + _length(raw_value) + raw_value
    return block


class Connection:
    """One cleartext HTTP/2 connection (prior knowledge) to `host:port`."""

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self._socket = socket.create_connection((host, port), timeout=timeout)
        self._buffer = b""
        self._socket.sendall(PREFACE)
        self.send(SETTINGS, 0, 0)

    def close(self) -> None:
        self._socket.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, frame_type: int, flags: int, stream_id: int, payload: bytes = b"") -> None:
        header = struct.pack("!I", len(payload))[1:] + struct.pack("!BBI", frame_type, flags,
                                                                  stream_id)
        self._socket.sendall(header + payload)

    def send_headers(self, stream_id: int, headers: list[tuple[str, str]], *,
                     end_stream: bool) -> None:
        self.send(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), stream_id,
                  header_block(headers))

    def _read_exactly(self, count: int) -> bytes:
        while len(self._buffer) < count:
            chunk = self._socket.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self._buffer += chunk
        taken, self._buffer = self._buffer[:count], self._buffer[count:]
        return taken

    def receive(self) -> Frame:
        """The next frame; a SETTINGS frame from the server is acknowledged as it is read."""
        head = self._read_exactly(9)
        length = int.from_bytes(head[:3], "big")
        frame_type, flags, stream_id = struct.unpack("!BBI", head[3:])
        frame = Frame(frame_type, flags, stream_id & 0x7FFF_FFFF, self._read_exactly(length))
        if frame.type == SETTINGS and not frame.flags & ACK:
            self.send(SETTINGS, ACK, 0)
        return frame
