"""The hostile suite: real hostile programs, each in both sandbox modes.

Every case runs beside an honest bystander batch (standing in for the other seat
and the reference) and asserts the safe outcome: the hostile program's per-call
verdicts, the bystander's results exactly as expected, no file created, and the
sandbox still serving the next batch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from cogolf.sandbox.api import CallStatus, Limits, LoadStatus

from .conftest import Runner

S = CallStatus
LIMITS = Limits(cpu_seconds_per_call=0.3, load_cpu_seconds=0.5, wall_seconds_per_batch=2.0)
BYSTANDER = "def solve(a, b):\n    return [a * b, str(a) + str(b)]\n"
BYSTANDER_CALLS = [[i, i + 1] for i in range(6)]
BYSTANDER_EXPECT = [[i * (i + 1), f"{i}{i + 1}"] for i in range(6)]
TARGET = "/tmp/cogolf-hostile-target"  # what write attempts aim at; must never appear
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Switches the audit hook off the way a program can (it is a tripwire, not a wall) and
# finds the harness's ctypes through the class tree, which no hiding can prune.
HOOK_OFF_WITH_LIBC = """
import sys
hook = sys.modules['__main__']._audit_hook
hook.__defaults__ = ((), frozenset(), 0) + hook.__defaults__[3:]
def _cdll():
    todo, seen = [object], set()
    while todo:
        c = todo.pop()
        if id(c) not in seen:
            seen.add(id(c))
            if c.__name__ == 'CDLL':
                return c
            todo.extend(type.__subclasses__(c))
libc = _cdll()(None)
"""


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    calls: int = 1
    load: LoadStatus = LoadStatus.OK
    expect: tuple[frozenset[CallStatus] | CallStatus, ...] = ()
    detail: str = ""  # substring expected in the first call's (or the load's) detail
    value: object = None  # exact value of the first call, when it must be OK


def fn(body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"import os, sys\ndef solve(*args):\n{lines}\n"


ANY_FAIL = frozenset({S.ERROR, S.CRASH, S.TIMEOUT})
ERR_OR_CRASH = frozenset({S.ERROR, S.CRASH})

CASES = [
    # --- CPU and wall clock
    Case(
        "loop_at_load", "while True:\n    pass\n", load=LoadStatus.LOAD_TIMEOUT, expect=(S.NOT_RUN,)
    ),
    Case("loop_in_call", fn("while True:\n    pass"), 2, expect=(S.TIMEOUT, S.NOT_RUN)),
    Case("c_level_loop", fn("return sum(range(10**12))"), expect=(S.TIMEOUT,), detail="CPU"),
    Case(
        "system_time_loop",
        fn("while True:\n    os.urandom(1 << 22)"),
        expect=(S.TIMEOUT,),
        detail="CPU",
    ),
    Case(
        "catastrophic_regex",
        "import re\n" + fn("return bool(re.match(r'(a+)+$', 'a' * 40 + 'b'))"),
        expect=(S.TIMEOUT,),
    ),
    Case(
        "sleep",
        "import time\n" + fn("time.sleep(100)"),
        2,
        expect=(S.TIMEOUT, S.NOT_RUN),
        detail="wall clock",
    ),
    Case(
        "cancel_timers_ignore_signals",
        "import _signal\n"
        + fn("""
for sig in (_signal.SIGXCPU, _signal.SIGTERM, _signal.SIGALRM, _signal.SIGVTALRM):
    _signal.signal(sig, _signal.SIG_IGN)
_signal.setitimer(_signal.ITIMER_REAL, 0)
_signal.setitimer(_signal.ITIMER_VIRTUAL, 0)
while True:
    pass"""),
        expect=(frozenset({S.TIMEOUT, S.ERROR}),),
    ),
    Case("input", fn("return input()"), 2, expect=(S.ERROR, S.ERROR), detail="EOFError"),
    # --- memory
    Case("memory_bomb_alloc", fn("return len([0] * (10 ** 9))"), 2, expect=(ERR_OR_CRASH,)),
    Case(
        "memory_bomb_grow",
        fn("x = []\nwhile True:\n    x.append(bytearray(1 << 20))"),
        # Stopped by a limit either way: near the memory cap the kernel's reclaim is
        # charged to the caller's CPU, so on a loaded machine the CPU limit can come first.
        expect=(ERR_OR_CRASH | {S.TIMEOUT},),
    ),
    Case(
        "memory_bomb_at_load",
        "x = bytearray(1 << 31)\n" + fn("return 1"),
        load=LoadStatus.LOAD_ERROR,
        expect=(S.NOT_RUN,),
        detail="MemoryError",
    ),
    Case(
        "recursion_with_raised_limit",
        fn("sys.setrecursionlimit(10 ** 7)\ndef f(n):\n    return f(n + 1) + 1\nreturn f(0)"),
        expect=(ANY_FAIL,),
    ),
    # --- processes and threads
    Case("fork", fn("return os.fork()"), 2, expect=(S.ERROR, S.ERROR)),
    Case("fork_bomb", fn("while True:\n    os.fork()"), expect=(S.ERROR,)),
    Case(
        "posix_spawn",
        fn(f"return os.posix_spawn('/bin/sh', ['sh', '-c', 'touch {TARGET}'], {{}})"),
        expect=(S.ERROR,),
    ),
    Case(
        "posixsubprocess_fork_exec",
        fn("""
import _posixsubprocess
return _posixsubprocess.fork_exec(['/bin/true'], [b'/bin/true'], True, (), None, None,
    -1, -1, -1, -1, -1, -1, -1, -1, False, False, None, None, None, -1, None, False)"""),
        expect=(S.ERROR,),
    ),
    Case("os_system", fn(f"return os.system('touch {TARGET}')"), expect=(S.ERROR,)),
    Case(
        "thread_via_underscore_thread",
        "import _thread\n" + fn("_thread.start_new_thread(print, ())\nreturn 1"),
        expect=(S.ERROR,),
    ),
    Case(
        "threading_import",
        fn("import threading\nreturn 1"),
        expect=(S.ERROR,),
        detail="PermissionError",
    ),
    Case(
        "multiprocessing_import",
        "import multiprocessing\n" + fn("return 1"),
        load=LoadStatus.LOAD_ERROR,
        expect=(S.NOT_RUN,),
    ),
    Case(
        "subprocess_import",
        fn("import subprocess\nreturn subprocess.run(['true'])"),
        expect=(S.ERROR,),
    ),
    # --- signals
    Case("kill_everything", fn("os.kill(-1, 9)\nreturn 1"), 2, expect=(S.ERROR, S.ERROR)),
    Case("kill_parent", fn("os.kill(os.getppid(), 9)\nreturn 1"), 2, expect=(S.ERROR, S.ERROR)),
    Case("kill_process_group_zero", fn("os.kill(0, 9)\nreturn 1"), expect=(S.ERROR,)),
    Case("signal_server_by_pid", fn("os.kill(args[0], 0)\nreturn 1"), expect=(S.ERROR,)),
    # --- reading what is not ours
    Case("read_reference", fn("return open(args[1]).read()"), expect=(S.ERROR,)),
    Case("read_etc_passwd", fn("return open('/etc/passwd').read()"), expect=(S.ERROR,)),
    Case(
        "read_server_cmdline",
        fn("return open(f'/proc/{args[0]}/cmdline').read()"),
        expect=(S.ERROR,),
    ),
    Case(
        "read_server_environ",
        fn("return open(f'/proc/{args[0]}/environ').read()"),
        expect=(S.ERROR,),
    ),
    Case("list_root", fn("return os.listdir('/')"), expect=(S.ERROR,)),
    # --- seeing what is not ours: the root is private and empty
    Case(
        "stat_etc_shadow",
        fn("return str(os.stat('/etc/shadow'))"),
        expect=(S.ERROR,),
        detail="FileNotFoundError",
    ),
    Case(
        "stat_reference", fn("return str(os.stat(args[1]))"), expect=(S.ERROR,),
        detail="FileNotFoundError",
    ),
    Case(
        "stat_reference_folder",
        fn("return str(os.stat(os.path.dirname(args[1])))"),
        expect=(S.ERROR,),
        detail="FileNotFoundError",
    ),
    Case(
        "stat_repository",
        fn(f"return str(os.stat({os.path.join(REPOSITORY, 'references')!r}))"),
        expect=(S.ERROR,),
        detail="FileNotFoundError",
    ),
    Case(
        "stat_server_proc",
        fn("return str(os.stat(f'/proc/{args[0]}'))"),
        expect=(S.ERROR,),
        detail="FileNotFoundError",
    ),
    Case(
        "root_is_empty",
        fn("""
names = ('etc', 'usr', 'proc', 'sys', 'dev', 'tmp', 'home', 'root', 'bin', 'lib', 'run', 'var')
return [os.stat('/').st_nlink, [n for n in names if os.path.lexists('/' + n)], os.getcwd()]"""),
        expect=(S.OK,),
        value=[2, [], "/"],
    ),
    Case(
        "walk_up_from_cwd",
        fn("return str(os.stat('../../../../etc/passwd'))"),
        expect=(S.ERROR,),
        detail="FileNotFoundError",
    ),
    Case(
        "inotify_on_host_dirs_hook_off",
        HOOK_OFF_WITH_LIBC
        + fn(f"""
fd = libc.inotify_init()
paths = ['/', '/etc', '/tmp', os.path.dirname(args[1]), {REPOSITORY!r}]
return [fd >= 0, [libc.inotify_add_watch(fd, p.encode(), 0xfff) for p in paths]]"""),
        expect=(S.OK,),
        value=[True, [-1] * 5],
    ),
    Case(
        "libc_mount_unshare_chroot_hook_off",
        HOOK_OFF_WITH_LIBC
        + fn("""
return [libc.mount(b'none', b'/', b'tmpfs', 0, None), libc.unshare(0x20020000),
        libc.chroot(b'/'), libc.umount2(b'/', 2), libc.setns(0, 0),
        libc.open(b'/etc/passwd', 0), libc.socket(2, 1, 0)]"""),
        expect=(S.OK,),
        value=[-1] * 7,
    ),
    Case(
        "write_hook_off",
        HOOK_OFF_WITH_LIBC + fn(f"open('{TARGET}', 'w').write('x')\nreturn 1"),
        expect=(S.ERROR,),
    ),
    Case(
        "descriptors_beyond_the_protocol",
        fn("""
open_fds = []
for fd in range(1024):
    try:
        os.fstat(fd)
        open_fds.append(fd)
    except OSError:
        pass
return open_fds"""),
        expect=(S.OK,),
        value=[0, 1, 2, 3, 4],
    ),
    # --- seeing other processes: a PID namespace of its own, no /proc
    Case("own_pid_namespace", fn("return [os.getpid(), os.getppid()]"), expect=(S.OK,),
         value=[1, 0]),
    Case(
        "proc_of_host_pids",
        fn("return [n for n in (1, 2, args[0]) if os.path.lexists(f'/proc/{n}')]"),
        expect=(S.OK,),
        value=[],
    ),
    Case("list_proc", fn("return os.listdir('/proc')"), expect=(S.ERROR,)),
    Case(
        "read_own_source_dir",
        fn("return os.listdir(os.path.dirname(os.__file__))"),
        expect=(S.ERROR,),
    ),
    # --- network
    Case(
        "tcp_via_sys_modules_socket",
        fn("""
s = sys.modules['_socket']
t = s.socket(s.AF_INET, s.SOCK_STREAM)
t.connect(('127.0.0.1', 22))
return 1"""),
        expect=(S.ERROR,),
    ),
    Case(
        "udp_via_sys_modules_socket",
        fn("""
s = sys.modules['_socket']
u = s.socket(s.AF_INET, s.SOCK_DGRAM)
u.sendto(b'x', ('8.8.8.8', 53))
return 1"""),
        expect=(S.ERROR,),
    ),
    Case(
        "socket_import_at_load",
        "import socket\n" + fn("return 1"),
        load=LoadStatus.LOAD_ERROR,
        expect=(S.NOT_RUN,),
    ),
    Case(
        "ctypes_via_importlib",
        fn("import importlib\nreturn str(importlib.import_module('ctypes'))"),
        expect=(S.ERROR,),
    ),
    Case("ctypes_via_dunder_import", fn("return str(__import__('_ctypes'))"), expect=(S.ERROR,)),
    # --- writing
    Case("write_via_open", fn(f"open('{TARGET}', 'w').write('x')\nreturn 1"), expect=(S.ERROR,)),
    Case(
        "write_via_os_open",
        fn(f"fd = os.open('{TARGET}', os.O_WRONLY | os.O_CREAT)\nos.write(fd, b'x')\nreturn 1"),
        expect=(S.ERROR,),
    ),
    Case(
        "write_relative_in_cwd", fn("open('made-here', 'x').close()\nreturn 1"), expect=(S.ERROR,)
    ),
    Case("mkdir", fn(f"os.mkdir('{TARGET}')\nreturn 1"), expect=(S.ERROR,)),
    Case("unlink_reference", fn("os.unlink(args[1])\nreturn 1"), expect=(S.ERROR,)),
    Case(
        "write_inherited_stdout_fd",
        fn("os.write(1, b'x' * 100000)\nreturn 'ok'"),
        expect=(S.OK,),
        value="ok",
    ),
    # --- forging and breaking the protocol
    Case(
        "forged_line_same_seq",
        fn('os.write(4, b\'{"k":"call","seq":0,"status":"ok","value":42}\\n\')\nreturn 1'),
        2,
        expect=(S.OK, S.CRASH),
        value=42,
    ),
    Case(
        "forged_line_future_seq",
        fn('os.write(4, b\'{"k":"call","seq":5,"status":"ok","value":42}\\n\')\nreturn 1'),
        3,
        # only the call that broke the protocol is charged; the rest were not run
        expect=(S.CRASH, S.NOT_RUN, S.NOT_RUN),
        detail="protocol",
    ),
    Case(
        "forged_invalid_utf8",
        fn("os.write(4, b'\\xff\\xfe\\xfd\\n')\nreturn 1"),
        2,
        expect=(S.CRASH, S.NOT_RUN),
        detail="UTF-8",
    ),
    Case(
        "forged_deep_nesting",
        fn("os.write(4, b'[' * 200000 + b'\\n')\nreturn 1"),
        expect=(S.CRASH,),
        detail="protocol",
    ),
    Case(
        "forged_huge_integer",
        fn("""
sys.set_int_max_str_digits(0)
os.write(4, b'{"k":"call","seq":0,"status":"ok","value":' + b'9' * 200000 + b'}\\n')
return 1"""),
        expect=(S.CRASH,),
        detail="protocol",
    ),
    Case(
        "forged_flood_without_newline",
        fn("while True:\n    os.write(4, b'x' * 65536)"),
        expect=(S.CRASH,),
        detail="protocol",
    ),
    Case(
        "forged_lines_on_stdout",
        fn(
            'for _ in range(1000):\n    print(\'{"k":"call","seq":0,"status":"ok","value":7}\')\n'
            "return 1"
        ),
        expect=(S.OK,),
        value=1,
    ),
    Case(
        "monkeypatched_json",
        "import json\n"
        + fn(
            "json.dumps = lambda *a, **k: '999'\n"
            "json.JSONEncoder.encode = lambda *a, **k: '999'\nreturn [1, 2]"
        ),
        2,
        expect=(S.OK, S.OK),
        value=[1, 2],
    ),
    Case(
        "patched_builtins_type",
        "import builtins\n" + fn("builtins.type = lambda x: int\nreturn {1}"),
        2,
        expect=(S.INVALID, S.INVALID),
    ),
    Case(
        "gc_introspection",
        "import gc\n" + fn("return len([o for o in gc.get_objects() if type(o) is dict]) > 0"),
        expect=(S.OK,),
        value=True,
    ),
    Case(
        "frame_introspection",
        fn("f = sys._getframe(1)\nf.f_locals.clear()\nreturn 'x'"),
        2,
        expect=(S.OK, S.OK),
        value="x",
    ),
    Case("os_exit", fn("os._exit(0)"), 3, expect=(S.CRASH, S.NOT_RUN, S.NOT_RUN)),
    Case("close_result_descriptor", fn("os.close(4)\nreturn 1"), 2, expect=(S.CRASH, S.NOT_RUN)),
    Case("close_all_descriptors", fn("os.closerange(0, 64)\nreturn 1"), expect=(S.CRASH,)),
    Case(
        "redirect_result_descriptor", fn("os.dup2(1, 4)\nreturn 1"), 2, expect=(S.CRASH, S.NOT_RUN)
    ),
    # --- values that are not values
    Case(
        "huge_int_with_lifted_digit_limit",
        fn("sys.set_int_max_str_digits(0)\nreturn 10 ** 5000"),
        2,
        expect=(S.INVALID, S.INVALID),
        detail="4096 bits",
    ),
    Case("int_at_the_cap", fn("return 2 ** 4095"), expect=(S.OK,), value=2**4095),
    Case("nan", fn("return float('nan')"), expect=(S.INVALID,)),
    Case("infinity_in_list", fn("return [1, float('inf')]"), expect=(S.INVALID,)),
    Case("set_return", fn("return {1, 2}"), expect=(S.INVALID,), detail="set"),
    Case("bytes_return", fn("return b'x'"), expect=(S.INVALID,)),
    Case(
        "lying_int_subclass",
        fn("""
class L(int):
    def __eq__(self, o): return True
    def __hash__(self): return 0
return L(3)"""),
        expect=(S.INVALID,),
        detail="L is not a value",
    ),
    Case(
        "lying_list_subclass",
        fn("""
class L(list):
    def __iter__(self):
        while True: yield 1
return L([1])"""),
        expect=(S.INVALID,),
    ),
    Case("non_string_key", fn("return {1: 2}"), expect=(S.INVALID,)),
    Case(
        "str_subclass_key", fn("class K(str):\n    pass\nreturn {K('a'): 1}"), expect=(S.INVALID,)
    ),
    Case(
        "deep_return_value",
        fn("""
v = []
for _ in range(10 ** 5):
    v = [v]
return v"""),
        2,
        expect=(S.INVALID, S.INVALID),
        detail="nesting",
    ),
    Case(
        "raising_str_exception",
        fn("""
class E(Exception):
    def __str__(self): raise RuntimeError('boom')
    def __repr__(self): raise RuntimeError('boom')
raise E()"""),
        2,
        expect=(S.ERROR, S.ERROR),
        detail="E",
    ),
    Case(
        "spinning_del_exception",
        fn("""
class E(Exception):
    def __del__(self):
        while True: pass
if args and args[0] == 'raise':
    raise E()
return 'fine'"""),
        0,
    ),
    Case(
        "system_exit", fn("raise SystemExit(0)"), 2, expect=(S.ERROR, S.ERROR), detail="SystemExit"
    ),
    Case("keyboard_interrupt", fn("raise KeyboardInterrupt"), expect=(S.ERROR,)),
    Case(
        "tiny_recursion_limit",
        fn("sys.setrecursionlimit(25)\nreturn [[[[[[1]]]]]]"),
        2,
        expect=(S.OK, S.OK),
        value=[[[[[[1]]]]]],
    ),
    # --- the program is not a program
    Case(
        "solve_is_not_callable",
        "solve = 5\n",
        load=LoadStatus.MISSING_FUNCTION,
        expect=(S.NOT_RUN,),
    ),
    Case(
        "generator_solve",
        "def solve(*args):\n    yield 1\n",
        2,
        expect=(S.INVALID, S.INVALID),
        detail="generator",
    ),
    Case(
        "syntax_error",
        "def solve(:\n    return 1\n",
        load=LoadStatus.SYNTAX_ERROR,
        expect=(S.NOT_RUN,),
    ),
    Case(
        "raise_at_load",
        "raise ValueError('no')\n",
        load=LoadStatus.LOAD_ERROR,
        expect=(S.NOT_RUN,),
        detail="ValueError",
    ),
]


def _statuses(expect: CallStatus | frozenset[CallStatus]) -> frozenset[CallStatus]:
    return expect if isinstance(expect, frozenset) else frozenset({expect})


@pytest.fixture
def secret(tmp_path: os.PathLike[str]) -> str:
    path = os.path.join(str(tmp_path), "reference.py")
    with open(path, "w") as fh:
        fh.write("SECRET = 'the reference'\n")
    os.chmod(str(tmp_path), 0o755)
    os.chmod(path, 0o644)  # readable for any uid: only the kernel walls stop the read
    return path


def test_there_are_at_least_fifty_cases() -> None:
    assert len(CASES) >= 50
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, runner: Runner, secret: str) -> None:
    if case.id == "spinning_del_exception":
        _spinning_del(runner, case)
        return
    calls = [[os.getpid(), secret] for _ in range(case.calls)]
    hostile, bystander = runner.gather(
        (case.source, calls), (BYSTANDER, BYSTANDER_CALLS), limits=LIMITS
    )
    # the other seat's / the reference's results are untouched
    assert bystander.load is LoadStatus.OK
    assert [c.value for c in bystander.results] == BYSTANDER_EXPECT
    # the hostile program gets exactly the verdicts it earned
    assert len(hostile.results) == case.calls
    assert hostile.load is case.load, hostile
    for got, want in zip(hostile.results, case.expect, strict=False):
        assert got.status in _statuses(want), hostile
    first = hostile.results[0] if hostile.results else None
    if case.detail:
        where = hostile.load_detail if case.load is not LoadStatus.OK else first.detail
        assert case.detail in where, hostile
    if case.value is not None:
        assert first is not None and first.status is S.OK and first.value == case.value, hostile
    # nothing written anywhere, the secret intact, and the sandbox still serves
    assert not os.path.exists(TARGET)
    with open(secret) as fh:
        assert fh.read() == "SECRET = 'the reference'\n"
    again = runner.batch(BYSTANDER, BYSTANDER_CALLS[:2])
    assert [c.value for c in again.results] == BYSTANDER_EXPECT[:2]


def _spinning_del(runner: Runner, case: Case) -> None:
    r = runner.batch(case.source, [["raise"], ["x"], ["raise"], ["x"]], limits=LIMITS)
    assert [c.status for c in r.results] == [S.ERROR, S.OK, S.ERROR, S.OK], r
    assert r.results[0].detail == "E"


# Everything reachable from the program's frames (locals, globals, builtins, what they
# hold, functions' globals, closures and defaults, objects' attributes, the modules in
# sys.modules), searched for the harness's own syscall and socket objects.
FRAME_WALK = '''
import sys, types
HARNESS = {"ctypes", "_ctypes", "socket", "_socket", "select", "selectors", "kernel"}
def solve():
    f = sys._getframe()
    todo, seen, found = [], set(), set()
    while f is not None:
        todo += [f.f_locals, f.f_globals, f.f_builtins]
        f = f.f_back
    todo.append(sys.modules)
    steps = 0
    while todo and steps < 400000:
        o = todo.pop()
        steps += 1
        if id(o) in seen:
            continue
        seen.add(id(o))
        kind = type(o)
        if kind is types.ModuleType:
            if o.__name__.partition(".")[0] in HARNESS:
                found.add("module " + o.__name__)
            todo.append(vars(o))
            continue
        if getattr(kind, "__module__", "") in HARNESS:
            found.add("object of " + kind.__module__ + "." + kind.__name__)
        if kind is dict:
            todo.extend(o.values())
        elif kind in (list, tuple, set, frozenset):
            todo.extend(o)
        elif kind is types.FunctionType:
            todo += [o.__globals__, o.__defaults__ or (), o.__kwdefaults__ or {}]
            todo.extend(c.cell_contents for c in o.__closure__ or () if c.cell_contents
                        is not None)
        elif kind in (types.BuiltinFunctionType, types.MethodType):
            todo.append(getattr(o, "__self__", None))
        elif isinstance(o, type):
            continue
        elif hasattr(o, "__dict__") and type(o.__dict__) is dict:
            todo.append(o.__dict__)
    return [sorted(found), steps > 1000]
'''


def test_frames_lead_to_no_harness_object(runner: Runner) -> None:
    r = runner.batch(FRAME_WALK, limits=Limits(cpu_seconds_per_call=5.0,
                                               wall_seconds_per_batch=10.0))
    assert r.results[0].status is S.OK, r
    assert r.results[0].value == [[], True], r
