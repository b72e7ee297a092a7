"""The runner that executes inside every sandboxed process.

Run by the real interpreter with `-I -S -B`, never imported by untrusted code's
host: it puts up the kernel walls on itself, then loads one program and answers
calls one at a time on descriptor 4 while reading requests on descriptor 3.
Standard library only, so nothing from the server's environment is trusted or
needed. Two entry points:

    child.py spawn CONFIG_JSON   one batch in a freshly started interpreter
    child.py zygote CONTROL_FD   the fork server: forks one walled child per batch

Protocol (NDJSON both ways). The child writes {"k":"ready"} once its walls are up;
the parent sends {"source","function","max_line","memory","cpu_backstop"} (a fresh
child finds it waiting in the pipe; a pre-forked one gets it when its batch comes)
and the child lowers its RLIMIT_AS/RLIMIT_CPU to those, adds the audit hook and
answers {"k":"load"}; then for each {"seq","args"} it answers {"k":"call","seq",...}.
The parent sends the next call only after it has the previous result (lockstep),
and the child never sees expected values.

A zygote does once what is the same for every child: it enters its namespaces,
swaps in an empty private root (keeping descriptors of the cgroup trees, which
its children join through), installs the part of the seccomp filter a child no
longer needs to get past (inherited over fork; stacked filters give the most
restrictive verdict) and builds the Landlock ruleset, which each child enforces
as a domain of its own. It forks each child as pid 1 of a new PID namespace. Each
child adds the rest: its cgroups, rlimits, uid, and the filter denying process
creation, the uid calls and signals to anyone but itself.

A walled child returns out of every function that held the runner's own objects
(the wall code and its libc, the zygote's socket) and serves from the module
level, so a program walking frames finds none of them. The audit hook is a
tripwire for clear errors, not a wall: a program can switch it off.
"""

from __future__ import annotations

import builtins
import fcntl
import gc
import json
import os
import resource
import sys
import time

MAX_DEPTH = 64  # must equal cogolf.values.MAX_DEPTH (a test checks)
MAX_INT_BITS = 4096  # must equal cogolf.values.MAX_INT_BITS (a test checks)

REQ_FD = 3
RES_FD = 4

# Imported before any wall goes up: after the uid drop and Landlock the interpreter
# cannot read its own library directory, so only these are importable by programs.
PRELOAD = (
    "math", "re", "collections", "collections.abc", "itertools", "functools", "heapq",
    "bisect", "string", "json", "operator", "typing", "fractions", "decimal", "random",
    "statistics", "copy", "enum", "datetime", "textwrap", "unicodedata", "cmath",
    "numbers", "struct", "array",
)
# Loaded by the runner itself but not to be handed to programs through sys.modules.
HIDDEN_MODULES = ("ctypes", "_ctypes", "socket", "_socket", "selectors", "select", "kernel",
                  "resource", "platform", "fcntl")

DENY_EVENT_PREFIXES = (
    "socket.", "subprocess.", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.kill",
    "os.killpg", "ctypes.", "shutil.", "urllib.", "os.system", "pty.", "signal.pthread_kill",
    "os.forkpty", "winreg.", "resource.setrlimit", "os.chmod", "os.chown", "os.remove",
    "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.truncate",
    "os.putenv", "os.unsetenv",
)
DENY_IMPORTS = frozenset({
    "socket", "_socket", "subprocess", "_posixsubprocess", "ctypes", "_ctypes",
    "multiprocessing", "_multiprocessing", "threading", "concurrent", "asyncio", "signal",
    "mmap", "pty", "fcntl", "select", "selectors", "resource",
})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class _Invalid(Exception):
    """A returned object is outside the value domain."""


def _audit_hook(event: str, args: tuple, _prefixes=DENY_EVENT_PREFIXES, _imports=DENY_IMPORTS,
                _wflags=_WRITE_FLAGS, _type=type, _str=str, _int=int) -> None:
    # A tripwire only: the kernel walls hold without it.
    if event == "open":
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        if _type(flags) is _int and flags & _wflags:
            raise PermissionError("sandbox: opening files for writing is not allowed")
        if _type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode):
            raise PermissionError("sandbox: opening files for writing is not allowed")
        return
    if event == "import":
        name = args[0] if args else ""
        if _type(name) is _str and name.partition(".")[0] in _imports:
            raise PermissionError(f"sandbox: import of {name} is not allowed")
        return
    if event.startswith(_prefixes):
        raise PermissionError(f"sandbox: {event} is not allowed")


# --- encoding results without trusting anything the program touched ----------------

_type = type
_int_repr = int.__repr__
_float_repr = float.__repr__
_isfinite = __import__("math").isfinite
_escape = json.encoder.encode_basestring_ascii
_type_name = type.__dict__["__name__"].__get__
_set_int_digits = sys.set_int_max_str_digits
_set_recursion = sys.setrecursionlimit
_gc_isenabled = gc.isenabled
_gc_disable = gc.disable
_gc_enable = gc.enable
_process_time = time.process_time
_write = os.write
_read = os.read
_exit = os._exit
_loads = json.JSONDecoder().decode
_dict_items = dict.items
_len = len
_callable = callable


def encode_value(obj: object, depth: int = 0) -> str:
    """Canonical JSON text of `obj`, checking exact types so no user code runs."""
    if depth > MAX_DEPTH:
        raise _Invalid(f"nesting deeper than {MAX_DEPTH}")
    kind = _type(obj)
    if obj is None:
        return "null"
    if kind is bool:
        return "true" if obj else "false"
    if kind is int:
        if obj.bit_length() > MAX_INT_BITS:
            raise _Invalid(f"integer larger than {MAX_INT_BITS} bits")
        return _int_repr(obj)
    if kind is float:
        if not _isfinite(obj):
            raise _Invalid("non-finite float")
        return _float_repr(obj)
    if kind is str:
        return _escape(obj)
    if kind is list or kind is tuple:
        return "[" + ",".join([encode_value(item, depth + 1) for item in obj]) + "]"
    if kind is dict:
        parts = []
        for key, item in _dict_items(obj):
            if _type(key) is not str:
                raise _Invalid(f"object key of type {_type_name(_type(key))}")
            parts.append(_escape(key) + ":" + encode_value(item, depth + 1))
        return "{" + ",".join(parts) + "}"
    raise _Invalid(f"{_type_name(kind)} is not a value")


def _exc_name(exc: BaseException) -> str:
    return _type_name(_type(exc))[:80]


class Channel:
    """Line I/O on the two protocol descriptors with raw os.read/os.write."""

    def __init__(self, req_fd: int, res_fd: int) -> None:
        self.req_fd = req_fd
        self.res_fd = res_fd
        self.buf = b""

    def send(self, text: str) -> None:
        data = (text + "\n").encode("ascii", "backslashreplace")
        while data:
            n = _write(self.res_fd, data)
            data = data[n:]

    def recv(self) -> object | None:
        while b"\n" not in self.buf:
            chunk = _read(self.req_fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return _loads(line.decode("utf-8", "surrogatepass"))


def serve(chan: Channel, walls: dict[str, str], hook: bool = True) -> None:
    """Report the walls, load the program, answer calls until the parent hangs up."""
    chan.send('{"k":"ready","walls":' + encode_value(walls) + "}")
    header = chan.recv()
    if _type(header) is not dict:
        _exit(0)
    source = header.get("source", "")
    function = header.get("function", "solve")
    max_line = header.get("max_line", 1 << 18)
    # A pre-forked child learns its batch's limits only now, before any program code.
    _lower_limit(resource.RLIMIT_AS, header.get("memory"))
    _lower_limit(resource.RLIMIT_CPU, header.get("cpu_backstop"))
    if hook:  # after the runner's own setrlimit calls, which the hook would refuse
        sys.addaudithook(_audit_hook)
    keep: list[object] = []  # nothing the program made is freed (no __del__ runs)
    t0 = _process_time()
    status, detail = _load(source, function, keep)
    chan.send('{"k":"load","status":' + _escape(status) + ',"detail":' + _escape(detail)
              + ',"cpu":' + _float_repr(_process_time() - t0) + "}")
    if status != "ok":
        _exit(0)
    fn = keep[-1]
    while True:
        req = chan.recv()
        if _type(req) is not dict:
            _exit(0)
        seq = req["seq"]
        args = req["args"]
        t0 = _process_time()
        try:
            value = fn(*args)
        except BaseException as exc:  # the program's exception, whatever it is
            keep.append(exc)
            line = ('{"k":"call","seq":' + _int_repr(seq) + ',"status":"error","detail":'
                    + _escape(_exc_name(exc)))
        else:
            keep.append(value)
            line = _result_line(seq, value, max_line)
        chan.send(line + ',"cpu":' + _float_repr(_process_time() - t0) + "}")


def _lower_limit(which: int, value: object) -> None:
    if _type(value) is not int or value <= 0:
        return
    _soft, hard = resource.getrlimit(which)
    if hard == resource.RLIM_INFINITY or value < hard:
        resource.setrlimit(which, (value, value))


def _result_line(seq: int, value: object, max_line: int) -> str:
    # Undo what the call may have changed in the runner's own interpreter state.
    _set_recursion(1000)
    _set_int_digits(0)
    was_enabled = _gc_isenabled()
    _gc_disable()
    head = '{"k":"call","seq":' + _int_repr(seq)
    try:
        text = encode_value(value)
        if _len(text) > max_line - 200:
            raise _Invalid(f"value longer than {max_line - 200} bytes of JSON")
        return head + ',"status":"ok","value":' + text
    except _Invalid as why:
        return head + ',"status":"invalid","detail":' + _escape(why.args[0])
    except RecursionError:
        return head + ',"status":"invalid","detail":"nesting too deep"'
    finally:
        if was_enabled:
            _gc_enable()


def _load(source: object, function: object, keep: list[object]) -> tuple[str, str]:
    if _type(source) is not str or _type(function) is not str:
        return "load_error", "bad request"
    try:
        code = compile(source, "<submission>", "exec", dont_inherit=True)
    except BaseException as exc:
        lineno = getattr(exc, "lineno", None)
        where = f" at line {lineno}" if _type(lineno) is int else ""
        return "syntax_error", _exc_name(exc) + where
    namespace: dict[str, object] = {"__name__": "submission", "__builtins__": builtins}
    keep.append(namespace)
    try:
        exec(code, namespace)
    except BaseException as exc:
        keep.append(exc)
        return "load_error", _exc_name(exc)
    fn = dict.get(namespace, function)
    if not _callable(fn):
        return "missing_function", f"no callable {function!r}"
    keep.append(fn)
    return "ok", ""


# --- putting up the walls -----------------------------------------------------------


# --- putting up the walls -----------------------------------------------------------


_PID_SENTINEL = 0x7EADBEEF


class Prepared:
    """What a zygote puts up once for all its children: the shared part of the seccomp
    filter (already on the zygote, so inherited), a Landlock ruleset to enforce, and
    descriptors of the cgroup hierarchies, which its private root no longer shows."""

    def __init__(self, kernel: object, cgroup_mounts: dict[str, int]) -> None:
        k = kernel
        self.status: dict[str, str] = {}
        self.ruleset_fd: int | None = None
        self.cgroup_mounts = cgroup_mounts
        self.abi = 0
        self.base_filter = False
        try:
            rfd, self.abi = k.landlock_ruleset(min_abi=6)  # type: ignore[attr-defined]
            self.ruleset_fd = _high_fd(rfd)
        except Exception as exc:
            self.status["landlock"] = f"missing: {exc}"
        base, late = k.seccomp_split(self_pid=_PID_SENTINEL)  # type: ignore[attr-defined]
        self.child_filter = late
        try:
            k.no_new_privs()  # type: ignore[attr-defined]
            k.seccomp_install(base)  # type: ignore[attr-defined]
            self.base_filter = True
        except Exception:
            # Each child then installs the whole filter itself (and reports if it cannot).
            self.child_filter = seccomp_template(k)

    def kept_fds(self) -> list[int]:
        """The zygote's descriptors a child needs until its walls are up."""
        fds = list(self.cgroup_mounts.values())
        if self.ruleset_fd is not None:
            fds.append(self.ruleset_fd)
        return sorted(fds)


def _high_fd(fd: int) -> int:
    """`fd` moved far above the descriptors a child rearranges, so none lands on it."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)
    os.close(fd)
    return high


def seccomp_template(kernel: object) -> bytes:
    """The whole child filter with a placeholder for its own pid."""
    return kernel.seccomp_program(allow_processes=False, allow_exec=False,  # type: ignore[attr-defined]
                                  allow_network=False, self_pid=_PID_SENTINEL)


def apply_walls(kernel: object, cfg: dict, unshare_flags: int,
                prepared: Prepared | None = None,
                shared: dict[str, str] | None = None) -> dict[str, str]:
    """Put up every wall `cfg` asks for; returns wall -> "ok ..." or "missing: why".

    `shared` holds what a zygote already put up for all its children (namespaces,
    the private root); without it this process makes its own.
    """
    k = kernel
    status: dict[str, str] = dict(shared or {})

    def attempt(name: str, fn: object) -> None:
        try:
            result = fn()  # type: ignore[operator]
            status[name] = "ok" if result is None else f"ok {result}"
        except Exception as exc:
            status[name] = f"missing: {exc}"

    root = os.geteuid() == 0
    mounts = prepared.cgroup_mounts if prepared is not None else {}
    if cfg.get("cgroups"):
        attempt("cgroup", lambda: k.join_cgroups(tuple(cfg["cgroups"]), mounts))
    else:
        status["cgroup"] = "missing: no cgroup directory"
    for fd in mounts.values():  # they lead to the host's cgroup trees
        os.close(fd)
    if shared is None:
        if root:
            attempt("namespaces", lambda: k.unshare(unshare_flags))
        else:
            status["namespaces"] = "missing: not root"
        if status["namespaces"] != "ok":
            status["root"] = "missing: no mount namespace of its own"
        else:
            attempt("root", k.private_root)
    if not status["root"].startswith("ok"):
        os.chdir(cfg.get("cwd") or "/")
    # The launcher (server or zygote) forks each child as the first process of a PID
    # namespace of its own: the kernel's answer is the proof.
    status["pid_namespace"] = ("ok" if os.getpid() == 1 else
                               "missing: not the first process of its own PID namespace")
    attempt("rlimits", lambda: k.set_rlimits(address_space=cfg.get("memory"),
                                             cpu_seconds=cfg.get("cpu_backstop"), nproc=0))
    uid = cfg.get("uid")
    if root and _type(uid) is int and uid > 0:
        attempt("uid", lambda: k.drop_uid(uid))
    else:
        status["uid"] = "missing: not root" if not root else "missing: no uid leased"
    attempt("no_new_privs", k.no_new_privs)
    if prepared is not None and prepared.ruleset_fd is not None:
        rfd, abi = prepared.ruleset_fd, prepared.abi

        def enforce() -> str:
            try:
                k.landlock_enforce(rfd)
            finally:
                os.close(rfd)
            return f"abi {abi}"

        attempt("landlock", enforce)
    elif prepared is not None and "landlock" in prepared.status:
        status["landlock"] = prepared.status["landlock"]
    else:
        attempt("landlock", lambda: f"abi {k.landlock_restrict(min_abi=6)}")
    template = prepared.child_filter if prepared is not None else seccomp_template(k)
    program = template.replace(_PID_SENTINEL.to_bytes(4, "little"),
                               os.getpid().to_bytes(4, "little"))
    attempt("seccomp", lambda: k.seccomp_install(program))
    return status


def _load_kernel() -> object:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    try:
        import kernel
    finally:
        sys.path.pop(0)
    return kernel


def _preload() -> None:
    for name in PRELOAD:
        __import__(name)


def _hide_modules() -> None:
    for name in list(sys.modules):
        if name.partition(".")[0] in HIDDEN_MODULES:
            del sys.modules[name]


def _finish_walls(walls: dict[str, str], strict: bool, chan: Channel, *,
                  hidden: bool = False, hook: bool = True) -> None:
    if not hidden:  # a zygote hides them once, before it forks
        _hide_modules()
    if hook:  # installed by `serve` once the request is in, before the program compiles
        walls["audit_hook"] = "ok (a tripwire)"
    else:  # `cogolf doctor` checks that the kernel walls hold without the tripwire
        walls["audit_hook"] = "off (diagnostic run)"
    missing = sorted(name for name, st in walls.items() if st.startswith("missing"))
    if strict and missing:
        chan.send('{"k":"harness","detail":' + _escape(
            "walls missing: " + "; ".join(f"{m} ({walls[m]})" for m in missing)) + "}")
        _exit(0)


def _move_fds(req: int, res: int) -> None:
    a = fcntl.fcntl(req, fcntl.F_DUPFD, 10)
    b = fcntl.fcntl(res, fcntl.F_DUPFD, 10)
    os.close(req)
    os.close(res)
    os.dup2(a, REQ_FD)
    os.dup2(b, RES_FD)
    os.close(a)
    os.close(b)


class _Serve:
    """What a walled child hands back up to the module level, which serves from there.

    Every frame that held the harness's own objects (the kernel module and its libc,
    the zygote's socket, select and poller) has returned by the time a program runs,
    so walking frames from the program finds none of them.
    """

    def __init__(self, chan: Channel, walls: dict[str, str], hook: bool) -> None:
        self.chan = chan
        self.walls = walls
        self.hook = hook

    def args(self) -> tuple[Channel, dict[str, str], bool]:
        return self.chan, self.walls, self.hook


def run_spawn(cfg: dict) -> _Serve:
    _move_fds(int(cfg["req_fd"]), int(cfg["res_fd"]))
    kernel = _load_kernel()
    _preload()
    chan = Channel(REQ_FD, RES_FD)
    # No CLONE_NEWPID: the server started this interpreter in a PID namespace of its own.
    flags = (kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS
             | kernel.CLONE_NEWNS)
    walls = apply_walls(kernel, cfg, flags)
    hook = bool(cfg.get("audit_hook", True))
    _finish_walls(walls, bool(cfg.get("strict")), chan, hook=hook)
    return _Serve(chan, walls, hook)


def run_zygote(ctl_fd: int) -> _Serve:
    """Fork one walled child per request; never sees a program or a test.

    Every child is reaped as soon as it exits and the server is told, so a uid is
    released only once nothing of its last program is left. Returns only in a
    forked child, with what it is to serve.
    """
    import select
    import socket

    kernel = _load_kernel()
    _preload()
    sock = socket.socket(fileno=ctl_fd)
    shared: dict[str, str] = {}
    own_pid_ns: int | None = None
    cgroup_mounts: dict[str, int] = {}
    devnull = os.open(os.devnull, os.O_RDWR)
    if os.geteuid() == 0:
        cgroup_mounts = {p: _high_fd(fd) for p, fd in kernel.cgroup_mounts().items()}
        try:
            own_pid_ns = _high_fd(kernel.pid_namespace_fd())
        except OSError:
            own_pid_ns = None
        try:
            # Network, IPC, UTS and mount namespaces are made once and shared by every
            # child: the network one is empty, and children cannot create sockets anyway.
            kernel.unshare(kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS
                           | kernel.CLONE_NEWNS)
            shared["namespaces"] = "ok"
        except Exception as exc:
            shared["namespaces"] = f"missing: {exc}"
        if shared["namespaces"] == "ok":
            # One empty root for every child, built before the filter forbids mounts.
            try:
                kernel.private_root()
                shared["root"] = "ok"
            except Exception as exc:
                shared["root"] = f"missing: {exc}"
        else:
            shared["root"] = "missing: no mount namespace of its own"
    else:
        shared["namespaces"] = "missing: not root"
        shared["root"] = "missing: not root"
    prepared = Prepared(kernel, cgroup_mounts)
    _hide_modules()
    sock.sendall(b'{"k":"hello","walls":' + encode_value(shared).encode() + b"}")
    poller = select.poll()
    poller.register(ctl_fd, select.POLLIN)
    children: dict[int, int] = {}  # pidfd -> pid
    gc.freeze()  # keeps copy-on-write pages shared with every child
    while True:
        try:
            events = poller.poll()
        except InterruptedError:
            continue
        for fd, _event in events:
            if fd != ctl_fd:
                pid = children.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                _reap(pid)
                sock.sendall(b'{"k":"reaped","pid":' + _int_repr(pid).encode() + b"}")
                continue
            try:
                msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 4)
            except OSError:
                _exit(0)
            if not msg:
                _exit(0)
            forked = _fork_child(kernel, msg, fds, devnull, sock, shared, prepared,
                                 socket.send_fds, own_pid_ns)
            if _type(forked) is _Serve:
                return forked  # in the child: up and out of every harness frame
            if forked is not None:
                children[forked[0]] = forked[1]
                poller.register(forked[0], select.POLLIN)


def _fork_child(kernel: object, msg: bytes, fds: list[int], devnull: int, sock: object,
                shared: dict[str, str], prepared: Prepared, send_fds: object,
                own_pid_ns: int | None) -> tuple[int, int] | _Serve | None:
    # `send_fds` is passed in: importing socket here would put it back into sys.modules,
    # from which the zygote hid it, and every child would inherit it.
    try:
        cfg = json.loads(msg)
    except ValueError:
        cfg = None
    if _type(cfg) is not dict or _len(fds) != 2:
        for fd in fds:
            os.close(fd)
        return None
    reply: dict[str, object] = {"k": "forked", "id": cfg.get("id")}
    new_ns = False
    if own_pid_ns is not None:
        try:
            kernel.children_in_new_pid_namespace()  # type: ignore[attr-defined]
            new_ns = True
        except OSError:
            pass  # the child finds itself outside one and reports the wall missing
    try:
        pid = os.fork()
    except OSError as exc:
        pid = -1
        reply["error"] = f"fork failed: {exc}"
    if pid == 0:
        try:
            return _zygote_child(kernel, cfg, fds, devnull, sock, shared, prepared)
        except BaseException:
            _exit(70)
    if new_ns:
        kernel.children_in_own_pid_namespace(own_pid_ns)  # type: ignore[attr-defined]
    for fd in fds:
        os.close(fd)
    if pid < 0:
        sock.sendall(json.dumps(reply).encode())  # type: ignore[attr-defined]
        return None
    reply["pid"] = pid
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as exc:  # cannot watch it: kill it rather than lose track
        os.kill(pid, 9)
        _reap(pid)
        reply["error"] = f"pidfd_open failed: {exc}"
        sock.sendall(json.dumps(reply).encode())  # type: ignore[attr-defined]
        return None
    send_fds(sock, [json.dumps(reply).encode()], [pidfd])  # type: ignore[operator]
    return pidfd, pid


def _reap(pid: int) -> None:
    while True:
        try:
            os.waitpid(pid, 0)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def _zygote_child(kernel: object, cfg: dict, fds: list[int], devnull: int, sock: object,
                  shared: dict[str, str], prepared: Prepared) -> _Serve:
    sock.close()  # type: ignore[attr-defined]
    os.setsid()
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    _move_fds(fds[0], fds[1])
    low = RES_FD + 1
    for keep in prepared.kept_fds():
        os.closerange(low, keep)
        low = keep + 1
    os.closerange(low, 1 << 16)
    __import__("random").seed()  # children must not share the zygote's random state
    chan = Channel(REQ_FD, RES_FD)
    walls = apply_walls(kernel, cfg, 0, prepared, shared)
    hook = bool(cfg.get("audit_hook", True))
    _finish_walls(walls, bool(cfg.get("strict")), chan, hidden=True, hook=hook)
    return _Serve(chan, walls, hook)


def main(argv: list[str]) -> _Serve:
    if len(argv) >= 3 and argv[1] == "zygote":
        return run_zygote(int(argv[2]))
    if len(argv) >= 3 and argv[1] == "spawn":
        return run_spawn(json.loads(argv[2]))
    sys.stderr.write("usage: child.py spawn CONFIG_JSON | child.py zygote CONTROL_FD\n")
    _exit(2)


if __name__ == "__main__":
    # Served from the module level, below which no harness frame is left.
    try:
        serve(*main(sys.argv).args())
    except BaseException:
        _exit(70)
    _exit(0)
