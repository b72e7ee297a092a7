"""Kernel walls for untrusted processes, in the standard library only.

The child runner (`child.py`, run by a bare interpreter) and the external-program
runner (`walls.py`, run in the server) share these primitives: namespaces, the
no-new-privileges bit, a seccomp-BPF filter, Landlock, rlimits, cgroup v1 membership
and the uid drop. Python 3.11 exposes none of unshare/prctl/seccomp/landlock, so
they go through libc with ctypes. Nothing here imports the project, because the
child loads this file by path before any project code could be trusted.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import struct

# --- syscall plumbing ---------------------------------------------------------------

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long
_LIBC.prctl.restype = ctypes.c_int
_LIBC.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
_LIBC.unshare.restype = ctypes.c_int
_LIBC.unshare.argtypes = [ctypes.c_int]
_LIBC.setns.restype = ctypes.c_int
_LIBC.setns.argtypes = [ctypes.c_int, ctypes.c_int]
_LIBC.mount.restype = ctypes.c_int
_LIBC.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]
_LIBC.umount2.restype = ctypes.c_int
_LIBC.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]

IS_X86_64 = platform.machine() in ("x86_64", "AMD64")

SYS_LANDLOCK_CREATE_RULESET = 444  # these three are the same number on every architecture
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
SYS_SECCOMP = 317
SYS_PIVOT_ROOT = 155

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_GET_SECCOMP = 21
PR_SET_SECCOMP = 22
PR_SET_DUMPABLE = 4
SECCOMP_MODE_FILTER = 2


class WallError(OSError):
    """A wall could not be put up; `wall` names it."""

    def __init__(self, wall: str, detail: str) -> None:
        super().__init__(f"{wall}: {detail}")
        self.wall = wall
        self.detail = detail


def _check(wall: str, rc: int) -> int:
    if rc < 0:
        err = ctypes.get_errno()
        raise WallError(wall, os.strerror(err) or f"errno {err}")
    return rc


def unshare(flags: int) -> None:
    _check("namespaces", _LIBC.unshare(flags))


def pid_namespace_fd() -> int:
    """A descriptor of this process's own PID namespace, the way back for
    `children_in_own_pid_namespace`."""
    return os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)


def children_in_new_pid_namespace() -> None:
    """Make the next child this thread forks the first process (pid 1) of a new PID
    namespace; `children_in_own_pid_namespace` undoes it for the children after."""
    _check("pid_namespace", _LIBC.unshare(CLONE_NEWPID))


def children_in_own_pid_namespace(own_ns_fd: int) -> None:
    # A second unshare(CLONE_NEWPID) is refused while the first is pending, so the
    # way back is setns to the namespace this thread itself runs in.
    _check("pid_namespace", _LIBC.setns(own_ns_fd, CLONE_NEWPID))


def private_root() -> None:
    """Make an empty, read-only tmpfs the root of this (already private) mount namespace.

    Mounted over the current directory, swapped in with pivot_root and the old root
    detached: afterwards no path leads to a host file, so stat, inotify and path
    walks find nothing. Nothing is bound in: by the time this runs the interpreter
    has loaded everything it will use, and Landlock denies reading files anyway.
    Needs CAP_SYS_ADMIN in the mount namespace; leaves the cwd at the new root.
    """
    here = os.getcwd().encode()
    _check("root", _LIBC.mount(None, b"/", None, MS_REC | MS_PRIVATE, None))
    _check("root", _LIBC.mount(b"cogolf-root", here, b"tmpfs",
                               MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                               b"size=4k,nr_inodes=1,mode=0111"))
    os.chdir(here)  # into the new mount, which now hides the directory below it
    _check("root", _LIBC.syscall(ctypes.c_long(SYS_PIVOT_ROOT), b".", b"."))
    _check("root", _LIBC.umount2(b".", MNT_DETACH))  # the old root, stacked on top
    os.chdir("/")


def no_new_privs() -> None:
    _check("no_new_privs", _LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))


def parent_death_signal(signum: int) -> None:
    """Have the kernel send `signum` to this process when the thread that forked it
    ends (its parent's death, however it died). Cleared by a change of uid."""
    _check("pdeathsig", _LIBC.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0))


def child_subreaper() -> None:
    """Orphans of this process's descendants become its children (not init's), for it
    to reap at once: until reaped, a killed task keeps its place in its uid's pids
    count and RLIMIT_NPROC."""
    _check("subreaper", _LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))


def private_mount_namespace() -> None:
    """A mount namespace of this process's own, nothing mounted in it seen outside.
    Call it while the process has a single thread (the namespace is per thread)."""
    _check("mounts", _LIBC.unshare(CLONE_NEWNS))
    _check("mounts", _LIBC.mount(None, b"/", None, MS_REC | MS_PRIVATE, None))


def mount_tmpfs(path: str, size_bytes: int, uid: int, mode: int = 0o700) -> None:
    """Mount an empty tmpfs of `size_bytes` (rounded up to pages) on `path`, owned by
    `uid`, no devices, no setuid."""
    options = f"size={size_bytes},mode={mode:o},uid={uid},gid={uid}".encode()
    _check("scratch", _LIBC.mount(b"cogolf-scratch", path.encode(), b"tmpfs",
                                  MS_NOSUID | MS_NODEV, options))


def unmount(path: str) -> None:
    _check("scratch", _LIBC.umount2(path.encode(), MNT_DETACH))


def seccomp_available() -> bool:
    return IS_X86_64 and _LIBC.prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0


# --- Landlock -----------------------------------------------------------------------

LL_EXECUTE = 1 << 0
LL_WRITE_FILE = 1 << 1
LL_READ_FILE = 1 << 2
LL_READ_DIR = 1 << 3
LL_REMOVE_DIR = 1 << 4
LL_REMOVE_FILE = 1 << 5
LL_MAKE_CHAR = 1 << 6
LL_MAKE_DIR = 1 << 7
LL_MAKE_REG = 1 << 8
LL_MAKE_SOCK = 1 << 9
LL_MAKE_FIFO = 1 << 10
LL_MAKE_BLOCK = 1 << 11
LL_MAKE_SYM = 1 << 12
LL_REFER = 1 << 13  # ABI 2
LL_TRUNCATE = 1 << 14  # ABI 3
LL_IOCTL_DEV = 1 << 15  # ABI 5
LL_NET_BIND_TCP = 1 << 0  # ABI 4
LL_NET_CONNECT_TCP = 1 << 1
LL_SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
LL_SCOPE_SIGNAL = 1 << 1

_FILE_RIGHTS = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV
READ_RIGHTS = LL_READ_FILE | LL_READ_DIR
WRITE_RIGHTS = (
    LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SYM
    | LL_MAKE_FIFO | LL_MAKE_SOCK | LL_REFER | LL_TRUNCATE
)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is absent or disabled."""
    rc = _LIBC.syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(1))
    return max(int(rc), 0)


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= LL_REFER
    if abi >= 3:
        rights |= LL_TRUNCATE
    if abi >= 5:
        rights |= LL_IOCTL_DEV
    return rights


def landlock_ruleset(
    *,
    readable: tuple[str, ...] = (),
    writable: tuple[str, ...] = (),
    executable: tuple[str, ...] = (),
    devices: tuple[str, ...] = (),
    allow_tcp: bool = False,
    min_abi: int = 1,
) -> tuple[int, int]:
    """A ruleset descriptor confining to the listed paths, and the ABI it uses.

    Every filesystem right the kernel knows is handled, so anything not listed is
    denied, for root too. TCP bind/connect and signals/abstract sockets outside the
    domain are denied where the ABI supports it. The descriptor may be inherited
    and enforced later by `landlock_enforce` in each process that needs it.
    """
    abi = landlock_abi()
    if abi < min_abi:
        raise WallError("landlock", f"kernel Landlock ABI {abi} < required {min_abi}")
    fs = _fs_rights(abi)
    net = 0 if (abi < 4 or allow_tcp) else (LL_NET_BIND_TCP | LL_NET_CONNECT_TCP)
    scoped = (LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL) if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    rfd = _check("landlock", _LIBC.syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), buf,
                                           ctypes.c_size_t(len(attr)), ctypes.c_uint32(0)))
    try:
        grants: dict[str, int] = {}
        for path in readable:
            grants[path] = grants.get(path, 0) | READ_RIGHTS
        for path in executable:
            grants[path] = grants.get(path, 0) | READ_RIGHTS | LL_EXECUTE
        for path in writable:
            grants[path] = grants.get(path, 0) | READ_RIGHTS | WRITE_RIGHTS
        for path in devices:
            # read, write (open(..., "w") truncates) and ioctl a device: nothing can be
            # made or removed there
            grants[path] = (grants.get(path, 0) | READ_RIGHTS | LL_WRITE_FILE | LL_TRUNCATE
                            | LL_IOCTL_DEV)
        for path, rights in grants.items():
            _landlock_add_path(rfd, path, rights & fs)
    except BaseException:
        os.close(rfd)
        raise
    return rfd, abi


def landlock_enforce(ruleset_fd: int) -> None:
    """Confine this process to a ruleset; each call makes a new Landlock domain
    (so its own signal scope). Requires no_new_privs or CAP_SYS_ADMIN."""
    _check("landlock", _LIBC.syscall(ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF),
                                     ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)))


def landlock_restrict(
    *,
    readable: tuple[str, ...] = (),
    writable: tuple[str, ...] = (),
    executable: tuple[str, ...] = (),
    devices: tuple[str, ...] = (),
    allow_tcp: bool = False,
    min_abi: int = 1,
) -> int:
    """Confine this process (and what it later runs) to the listed paths; returns
    the ABI used. See `landlock_ruleset`. The caller sets no_new_privs first."""
    rfd, abi = landlock_ruleset(readable=readable, writable=writable, executable=executable,
                                devices=devices, allow_tcp=allow_tcp, min_abi=min_abi)
    try:
        landlock_enforce(rfd)
    finally:
        os.close(rfd)
    return abi


def _landlock_add_path(rfd: int, path: str, rights: int) -> None:
    try:
        pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a listed path that does not exist grants nothing
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        attr = struct.pack("=Qi", rights, pfd)  # landlock_path_beneath_attr is packed
        buf = ctypes.create_string_buffer(attr, len(attr))
        _check("landlock", _LIBC.syscall(ctypes.c_long(SYS_LANDLOCK_ADD_RULE), ctypes.c_int(rfd),
                                         ctypes.c_int(1), buf, ctypes.c_uint32(0)))
    finally:
        os.close(pfd)


# --- seccomp-BPF --------------------------------------------------------------------

_AUDIT_ARCH_X86_64 = 0xC000003E
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO_EPERM = 0x00050000 | 1
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06

# x86_64 numbers. Denied in every sandboxed process: kernel attack surface and ways
# to reach other processes that no contestant program needs.
_ALWAYS_DENIED = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272,
    "setns": 308, "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
    "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320,
    "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179,
    "open_by_handle_at": 304, "name_to_handle_at": 303, "mknod": 133, "mknodat": 259,
    "personality": 135, "shmget": 29, "shmat": 30, "semget": 64, "msgget": 68,
    "mq_open": 240, "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114,
    "setresuid": 117, "setresgid": 119, "setgroups": 116, "setfsuid": 122, "setfsgid": 123,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "pidfd_open": 434, "pidfd_getfd": 438,
    "pidfd_send_signal": 424, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
    "vhangup": 153, "iopl": 172, "ioperm": 173,
}
_PROCESS_CREATION = {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435}
_EXEC = {"execve": 59, "execveat": 322}
_NETWORK = {
    "socket": 41, "socketpair": 53, "connect": 42, "accept": 43, "accept4": 288,
    "bind": 49, "listen": 50,
}
_SIGNAL_SELF_ONLY = {"kill": 62, "tkill": 200, "tgkill": 234}
_UNIX_LISTEN = {"socket": 41, "bind": 49, "listen": 50}
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_SYS_PRCTL = 157
_SYS_IOCTL = 16
_TIOCSTI = 0x5412


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


# Denied per forked child rather than in the fork server's own filter: the child
# still needs them between fork and its last wall (uid drop), and the server needs
# pidfd_open for each child it forks and unshare/setns to fork it into a PID namespace
# of its own.
_CHILD_STAGE = {
    "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114, "setresuid": 117,
    "setresgid": 119, "setgroups": 116, "setfsuid": 122, "setfsgid": 123, "unshare": 272,
    "setns": 308, "pidfd_open": 434,
}


def denied_syscalls(*, allow_processes: bool, allow_exec: bool, allow_network: bool,
                    allow_socketpair: bool = False) -> dict[str, int]:
    """Every system call a sandboxed process with these allowances may not make.

    `allow_socketpair` lets a process tree without network talk to itself over an
    unnamed, already connected unix socket pair (Rust's process spawning needs one);
    it reaches nothing outside, unlike socket/connect/bind, which stay denied.
    """
    denied = dict(_ALWAYS_DENIED)
    if not allow_processes:
        denied.update(_PROCESS_CREATION)
    if not allow_exec:
        denied.update(_EXEC)
    if not allow_network:
        denied.update(_NETWORK)
        if allow_socketpair:
            del denied["socketpair"]
    return denied


def _program(denied: dict[str, int], *, self_pid: int | None, arg_rules: bool,
             socket_families: tuple[int, ...] = ()) -> bytes:
    out = [
        _insn(_LD_W_ABS, 0, 0, 4),  # arch
        _insn(_JEQ_K, 1, 0, _AUDIT_ARCH_X86_64),
        _insn(_RET_K, 0, 0, _RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, 0),  # syscall number
        _insn(_JGE_K, 0, 1, 0x40000000),  # the x32 ABI is another way in
        _insn(_RET_K, 0, 0, _RET_ERRNO_EPERM),
    ]
    for nr in sorted(set(denied.values())):
        out.append(_insn(_JEQ_K, 0, 1, nr))
        out.append(_insn(_RET_K, 0, 0, _RET_ERRNO_EPERM))
    for nr in sorted(_SIGNAL_SELF_ONLY.values()) if self_pid is not None else ():
        out += [
            _insn(_JEQ_K, 0, 4, nr),
            _insn(_LD_W_ABS, 0, 0, 16),  # low half of args[0]
            _insn(_JEQ_K, 0, 1, self_pid),
            _insn(_RET_K, 0, 0, _RET_ALLOW),
            _insn(_RET_K, 0, 0, _RET_ERRNO_EPERM),
        ]
    for nr, offset, value in ((_SYS_PRCTL, 16, PR_SET_DUMPABLE), (_SYS_IOCTL, 24, _TIOCSTI)) \
            if arg_rules else ():
        out += [
            _insn(_JEQ_K, 0, 4, nr),
            _insn(_LD_W_ABS, 0, 0, offset),
            _insn(_JEQ_K, 0, 1, value),
            _insn(_RET_K, 0, 0, _RET_ERRNO_EPERM),
            _insn(_RET_K, 0, 0, _RET_ALLOW),
        ]
    if socket_families:
        # socket() only for these address families; every other one is refused
        n = len(socket_families)
        out += [_insn(_JEQ_K, 0, n + 3, _NETWORK["socket"]),
                _insn(_LD_W_ABS, 0, 0, 16)]  # low half of args[0]: the address family
        out += [_insn(_JEQ_K, n - i, 0, family) for i, family in enumerate(socket_families)]
        out += [_insn(_RET_K, 0, 0, _RET_ERRNO_EPERM), _insn(_RET_K, 0, 0, _RET_ALLOW)]
    out.append(_insn(_RET_K, 0, 0, _RET_ALLOW))
    return b"".join(out)


def seccomp_program(*, allow_processes: bool, allow_exec: bool, allow_network: bool,
                    self_pid: int, signal_self_only: bool = True,
                    allow_socketpair: bool = False, allow_unix_listen: bool = False,
                    allow_loopback: bool = False) -> bytes:
    """A BPF program (sock_filter array) implementing the deny list above.

    Signals may only target this process itself (kill(-1), kill(getppid()) fail);
    prctl(PR_SET_DUMPABLE) is refused so a program cannot make itself traceable.
    `allow_unix_listen` (without network) lets a program create, bind and listen on
    unix sockets only (Chromium's single-instance lock needs one): socket() with any
    other family and connect() stay refused, so nothing outside can be reached.
    `allow_loopback` (without network, for a process in a network namespace of its
    own whose only interface is `lo`) lets it use TCP and UDP sockets, which can reach
    nothing but that namespace; socket() with any other family stays refused, so a
    unix socket on the host's filesystem cannot be connected to.
    """
    denied = denied_syscalls(allow_processes=allow_processes, allow_exec=allow_exec,
                             allow_network=allow_network, allow_socketpair=allow_socketpair)
    families: tuple[int, ...] = ()
    if allow_loopback and not allow_network:
        for name in _NETWORK:
            if name != "socketpair":
                denied.pop(name, None)
        if allow_unix_listen:
            # connect() is allowed here, so a unix socket could reach the host's
            raise ValueError("allow_loopback and allow_unix_listen do not combine")
        families = (_AF_INET, _AF_INET6)
    elif allow_unix_listen and not allow_network:
        for name in _UNIX_LISTEN:
            denied.pop(name, None)
        families = (_AF_UNIX,)
    return _program(denied, self_pid=self_pid if signal_self_only else None, arg_rules=True,
                    socket_families=families)


def seccomp_split(*, self_pid: int) -> tuple[bytes, bytes]:
    """The no-process, no-exec, no-network filter as two stacked programs.

    The first (everything not needed between fork and the last wall) goes on the
    fork server once and is inherited by every child; the second (process
    creation, the uid and namespace calls, signals to itself only) goes on each
    child. The kernel applies the most restrictive verdict of all stacked filters,
    so the pair denies exactly what `seccomp_program` denies.
    """
    denied = denied_syscalls(allow_processes=False, allow_exec=False, allow_network=False)
    late = {k: v for k, v in denied.items() if k in _CHILD_STAGE or k in _PROCESS_CREATION}
    early = {k: v for k, v in denied.items() if k not in late}
    return (_program(early, self_pid=None, arg_rules=True),
            _program(late, self_pid=self_pid, arg_rules=False))


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seccomp_install(program: bytes) -> None:
    if not IS_X86_64:
        raise WallError("seccomp", f"no filter for architecture {platform.machine()}")
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    rc = _LIBC.syscall(ctypes.c_long(SYS_SECCOMP), ctypes.c_uint(1),  # SECCOMP_SET_MODE_FILTER
                       ctypes.c_uint(0), ctypes.byref(prog))
    _check("seccomp", rc)


# --- rlimits, uid, cgroups ----------------------------------------------------------


def set_rlimits(*, address_space: int | None, cpu_seconds: int | None, nproc: int | None,
                nofile: int | None = 16, fsize: int = 0) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    if address_space is not None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    if cpu_seconds is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    if nproc is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    if nofile is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))


def drop_uid(uid: int) -> None:
    """Become `uid` (and gid `uid`) for real, effective and saved ids, with no groups.

    Done inside the running interpreter, so the kernel marks the process
    non-dumpable: a sibling cannot read its /proc/<pid>/mem even under the same uid.
    """
    try:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError as exc:
        raise WallError("uid", str(exc)) from exc
    if os.getuid() != uid or os.geteuid() != uid:
        raise WallError("uid", "uid did not change")


def cgroup_mounts() -> dict[str, int]:
    """Each cgroup hierarchy's mount point -> a descriptor of it (O_PATH).

    A process whose root is private can still join cgroups through these: a path
    below a mount point is opened relative to its descriptor, which outlives the
    detached host root. The descriptors lead to the host: close them before any
    program runs.
    """
    fds: dict[str, int] = {}
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return fds
    for line in lines:
        before, _, after = line.partition(" - ")
        fields = before.split()
        if len(fields) < 5 or after.split(" ", 1)[0] not in ("cgroup", "cgroup2"):
            continue
        point = fields[4].replace("\\040", " ")
        try:
            fds[point] = os.open(point, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
    return fds


def _open_procs(d: str, mounts: dict[str, int] | None) -> int:
    flags = os.O_WRONLY | os.O_CLOEXEC
    for point, mfd in (mounts or {}).items():
        if d.startswith(point.rstrip("/") + "/"):
            rel = os.path.relpath(os.path.join(d, "cgroup.procs"), point)
            return os.open(rel, flags, dir_fd=mfd)
    return os.open(os.path.join(d, "cgroup.procs"), flags)


def join_cgroups(dirs: tuple[str, ...], mounts: dict[str, int] | None = None) -> None:
    """Move this process into each cgroup directory (its `cgroup.procs`), through the
    descriptors of `cgroup_mounts` where one covers the directory."""
    pid = str(os.getpid()).encode()
    for d in dirs:
        fd = _open_procs(d, mounts)
        try:
            os.write(fd, pid)
        except OSError as exc:
            raise WallError("cgroup", f"{d}: {exc}") from exc
        finally:
            os.close(fd)


def cpu_ticks_per_second() -> int:
    return os.sysconf("SC_CLK_TCK")
