"""04b · What the processes say to each other: the gRPC service name, JSON messages, outcome codes.

Messages are JSON bytes through gRPC's generic handlers, so no ``protoc`` step is needed at install
or run time (see :mod:`.server`)."""

from __future__ import annotations

import json

SERVICE = "hotkeylab.HotKey"
#: how an attempt ended, as the load generator logs it
OK, TIMEOUT, REJECTED, ERROR = 0, 1, 2, 3


def dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def loads(data: bytes):
    return json.loads(data.decode()) if data else {}
