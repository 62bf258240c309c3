"""Key-value stores that processes rendezvous through (torch.distributed's Store API).

``HashStore`` lives in one process, ``FileStore`` in a file every process opens, and
``TCPStore`` on a small server thread in the master process that clients talk to over TCP.
All three share ``Store``'s methods: ``set``/``get`` (``get`` waits for the key up to the
timeout), ``add`` (a counter), ``wait``, ``check``, ``compare_set``, ``delete_key``,
``num_keys``, ``append`` and ``multi_get``/``multi_set``. Values are bytes (a str is encoded).
"""

from __future__ import annotations

import datetime
import fcntl
import pickle
import socket
import socketserver
import struct
import threading
import time

__all__ = ["Store", "HashStore", "FileStore", "TCPStore", "PrefixStore", "DistError",
           "DistBackendError", "DistStoreError", "DistNetworkError"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


class DistError(RuntimeError):
    """Base of the errors torch.distributed raises (a RuntimeError)."""


class DistBackendError(DistError):
    """A collective or point-to-point operation failed or timed out in the backend."""


class DistStoreError(DistError):
    """A store operation failed or timed out (e.g. ``get`` of a key that never appears)."""


class DistNetworkError(DistError):
    """A network problem, such as a store server that cannot be reached."""


def _as_bytes(value) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)):      # torch accepts a list of byte values too
        return bytes(value)
    raise TypeError(f"store values are str or bytes, got {type(value).__name__}")


def _seconds(timeout) -> float:
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


class _Table:
    """The dict behind HashStore and the TCPStore server, with a condition to wait on."""

    def __init__(self):
        self.data = {}
        self.cond = threading.Condition()

    def apply(self, op, args, timeout):
        """Run one store operation (the TCP server calls this for its clients)."""
        with self.cond:
            if op == "set":
                self.data[args[0]] = args[1]
                self.cond.notify_all()
                return None
            if op == "get" or op == "wait":
                keys = [args[0]] if op == "get" else args[0]
                if not self.cond.wait_for(lambda: all(k in self.data for k in keys),
                                          timeout=timeout):
                    raise DistStoreError("Wait timeout")
                return self.data[keys[0]] if op == "get" else None
            if op == "add":
                old = self.data.get(args[0], b"0")
                try:
                    value = int(old) + args[1]
                except ValueError:
                    raise ValueError("stoll") from None   # torch's message: not a number
                self.data[args[0]] = str(value).encode()
                self.cond.notify_all()
                return value
            if op == "compare_set":
                key, expected, desired = args
                if key not in self.data:
                    if expected == b"":
                        self.data[key] = desired
                        self.cond.notify_all()
                        return desired
                    return expected
                if self.data[key] == expected:
                    self.data[key] = desired
                    self.cond.notify_all()
                return self.data[key]
            if op == "append":
                self.data[args[0]] = self.data.get(args[0], b"") + args[1]
                self.cond.notify_all()
                return None
            if op == "delete":
                return self.data.pop(args[0], None) is not None
            if op == "check":
                return all(k in self.data for k in args[0])
            if op == "num_keys":
                return len(self.data)
        raise ValueError(f"unknown store operation {op!r}")


class Store:
    """The key-value store interface processes rendezvous through; subclasses implement
    ``_call(op, args, timeout)``."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    @property
    def timeout(self) -> datetime.timedelta:
        """How long ``get``/``wait`` wait for a missing key."""
        return self._timeout

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        """Set the default timeout of ``get`` and ``wait``."""
        self._timeout = timeout

    def set(self, key: str, value) -> None:
        """Store ``value`` (str or bytes) under ``key``."""
        self._call("set", (key, _as_bytes(value)), None)

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting up to the timeout for it to be set
        (DistStoreError after that)."""
        return self._call("get", (key,), _seconds(self._timeout))

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer counter ``key`` (0 when unset); returns the new
        value."""
        return self._call("add", (key, int(amount)), None)

    def wait(self, keys, timeout=None) -> None:
        """Wait until every key in ``keys`` is set (DistStoreError after ``timeout``)."""
        self._call("wait", (list(keys),), _seconds(self._timeout if timeout is None
                                                   else timeout))

    def check(self, keys) -> bool:
        """Whether every key in ``keys`` is set, without waiting."""
        return self._call("check", (list(keys),), None)

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is unset and
        ``expected_value`` is empty); returns the value it holds afterwards (``expected_value``
        when the key is unset and was not created)."""
        return self._call("compare_set", (key, _as_bytes(expected_value),
                                          _as_bytes(desired_value)), None)

    def append(self, key: str, value) -> None:
        """Append ``value`` to the bytes under ``key`` (creating it)."""
        self._call("append", (key, _as_bytes(value)), None)

    def multi_get(self, keys) -> list:
        """The values of several keys (each waited for, as ``get``)."""
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values) -> None:
        """Set several keys at once."""
        for k, v in zip(keys, values):
            self.set(k, v)

    def delete_key(self, key: str) -> bool:
        """Remove ``key``; True if it existed."""
        return self._call("delete", (key,), None)

    def num_keys(self) -> int:
        """How many keys the store holds."""
        return self._call("num_keys", (), None)

    def _call(self, op, args, timeout):
        raise NotImplementedError(f"{type(self).__name__} must implement _call")


class HashStore(Store):
    """A thread-safe store inside this process (processes cannot share it)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _call(self, op, args, timeout):
        return self._table.apply(op, args, timeout)


class PrefixStore(Store):
    """A view of ``store`` that prefixes every key with ``prefix + '/'``."""

    def __init__(self, prefix: str, store: Store):
        super().__init__()
        self._prefix, self.underlying_store = prefix, store
        self._timeout = store.timeout

    def _key(self, key):
        return f"{self._prefix}/{key}"

    def _call(self, op, args, timeout):
        if op in ("wait", "check"):
            args = ([self._key(k) for k in args[0]],)
        elif op != "num_keys":
            args = (self._key(args[0]),) + tuple(args[1:])
        return self.underlying_store._call(op, args, timeout)


class FileStore(Store):
    """A store kept in the file ``file_name`` that every process opens (on a shared file
    system for several machines). Each operation locks the file, replays its log of
    updates and appends its own."""

    def __init__(self, file_name: str, world_size: int = -1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        open(file_name, "ab").close()
        self.add("cleanup/", 1)     # torch's FileStore counts its users under a key too

    def delete_key(self, key: str) -> bool:
        """Remove ``key``; True (torch's FileStore answers True whether it existed or not)."""
        self._call("delete", (key,), None)
        return True

    def _locked(self, op, args):
        with open(self.path, "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                f.seek(0)
                table = _Table()
                raw = f.read()
                pos = 0
                while pos + 4 <= len(raw):
                    (n,) = struct.unpack("<I", raw[pos:pos + 4])
                    key, value = pickle.loads(raw[pos + 4:pos + 4 + n])
                    if value is None:
                        table.data.pop(key, None)
                    else:
                        table.data[key] = value
                    pos += 4 + n
                before = dict(table.data)
                result = table.apply(op, args, 0)
                changes = [(k, v) for k, v in table.data.items() if before.get(k) != v]
                changes += [(k, None) for k in before if k not in table.data]
                for change in changes:
                    blob = pickle.dumps(change)
                    f.write(struct.pack("<I", len(blob)) + blob)
                f.flush()
                return result
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _call(self, op, args, timeout):
        if op not in ("get", "wait"):
            return self._locked(op, args)
        keys = [args[0]] if op == "get" else args[0]
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:     # other processes write the file: poll it
            if self._locked("check", (keys,)):
                return self._locked(op, args) if op == "get" else None
            if time.monotonic() >= deadline:
                # torch's FileStore raises a plain RuntimeError here
                raise RuntimeError(f"Timeout waiting for key(s) {keys} in the FileStore "
                                   f"{self.path} after {timeout * 1000:.0f} ms")
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _send_msg(sock, obj):
    blob = pickle.dumps(obj)
    sock.sendall(struct.pack("<Q", len(blob)) + blob)


def _recv_exact(sock, n):
    chunks = bytearray()
    while len(chunks) < n:
        part = sock.recv(n - len(chunks))
        if not part:
            raise ConnectionError("the store connection was closed")
        chunks += part
    return bytes(chunks)


def _recv_msg(sock):
    (n,) = struct.unpack("<Q", _recv_exact(sock, 8))
    return pickle.loads(_recv_exact(sock, n))


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        table = self.server.table
        while True:
            try:
                op, args, timeout = _recv_msg(self.request)
            except (ConnectionError, OSError, EOFError):
                return
            try:
                reply = (True, table.apply(op, args, timeout))
            except Exception as e:      # sent back and raised in the client
                reply = (False, e)
            try:
                _send_msg(self.request, reply)
            except OSError:
                return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class TCPStore(Store):
    """A store served over TCP by the master process (``is_master=True``, which listens on
    ``host_name:port``; port 0 picks a free one, see ``.port``); other processes connect as
    clients, retrying until ``timeout``. With ``wait_for_workers`` the master waits until
    ``world_size`` processes have connected."""

    def __init__(self, host_name: str, port: int, world_size=None, is_master: bool = False,
                 timeout: datetime.timedelta = _DEFAULT_TIMEOUT, wait_for_workers: bool = True,
                 multi_tenant: bool = False, master_listen_fd=None, use_libuv: bool = True):
        super().__init__()
        self._timeout = timeout
        self.host, self.libuvBackend = host_name, use_libuv
        self._server = None
        if is_master:
            try:
                self._server = _Server(("", port), _Handler)
            except OSError as e:
                raise DistNetworkError(f"The server socket has failed to listen on any local "
                                       f"network address. port: {port}, {e}") from e
            self._server.table = _Table()
            threading.Thread(target=self._server.serve_forever, daemon=True,
                             name="glasstorch-TCPStore").start()
            port = self._server.server_address[1]
        self.port = port
        self._lock = threading.Lock()
        self._sock = self._connect(_seconds(timeout))
        self.add("init/", 1)      # torch's TCPStore counts its workers under this key
        if is_master and wait_for_workers and world_size:
            self._wait_count("init/", world_size, _seconds(timeout))

    def _connect(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=5)
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise DistNetworkError(f"failed to connect to the TCPStore at "
                                           f"{self.host}:{self.port} within {timeout:g} s: "
                                           f"{e}") from e
                time.sleep(0.05)

    def _wait_count(self, key, count, timeout):
        deadline = time.monotonic() + timeout
        while int(self._call("get", (key,), timeout)) < count:
            if time.monotonic() >= deadline:
                raise DistStoreError(f"Timed out after {timeout:g} s waiting for {count} "
                                     f"clients of the TCPStore")
            time.sleep(0.01)

    def _call(self, op, args, timeout):
        with self._lock:
            try:
                _send_msg(self._sock, (op, args, timeout))
                ok, value = _recv_msg(self._sock)
            except (ConnectionError, OSError) as e:
                raise DistNetworkError(f"lost the connection to the TCPStore at "
                                       f"{self.host}:{self.port}: {e}") from e
        if not ok:
            raise value
        return value

    def _shutdown(self):
        """Close the connection (and the server, in the master)."""
        try:
            self._sock.close()
        except OSError:
            pass
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
