# tbsim run_python prelude (not part of the agent's script).
#
# Inside bubblewrap this file first runs as PID 1 of the sandbox's PID
# namespace: the supervisor. It forks once; the child drops privileges, takes
# its resource limits and runs the agent's script, while the supervisor polls
# the whole sandbox (process count, memory, CPU time, workspace size), kills
# everything on a breach, and reports to the host on fd 0 (a pipe) how the
# script ended and which limit was hit. The script cannot reach that pipe:
# PID 1 ignores signals sent from inside its namespace, and the supervisor is
# either another user (when tbsim runs as root) or not dumpable, so
# /proc/1/fd is closed to the script.
import os
import sys

# runpy compiles with the absolute path; match it exactly when trimming frames.
_script = os.path.abspath(sys.argv[1])
_prelude = os.path.abspath(__file__)
# What -P would do: the prelude's folder must not be importable.
if sys.path and sys.path[0] != "" and _script.startswith(sys.path[0]):
    del sys.path[0]
# Inside bubblewrap the host passes the limits (JSON) and reads the status.
_config = sys.argv[2] if len(sys.argv) > 2 else None
sys.argv = ["script.py"]


def _report(line):
    try:
        os.write(0, (line + "\n").encode())
    except OSError:
        pass


def _fail(message):
    _report("error " + message)
    os._exit(125)


def _child(cfg, libc):
    import resource

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    uid = cfg["run_as"]
    try:
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        else:
            # The script's own processes may inspect each other; only the
            # supervisor stays closed.
            libc.prctl(4, 1, 0, 0, 0)

        def cap(kind, soft, hard=None):
            hard = soft if hard is None else hard
            _, old_hard = resource.getrlimit(kind)
            if old_hard != resource.RLIM_INFINITY:
                soft, hard = min(soft, old_hard), min(hard, old_hard)
            resource.setrlimit(kind, (soft, hard))

        if cfg["memory"] > 0:
            cap(resource.RLIMIT_AS, cfg["memory"])
        cap(resource.RLIMIT_NPROC, cfg["processes"])
        # Per process, a second above the supervisor's cap on the total:
        # SIGXCPU at the soft limit, SIGKILL a second later.
        cap(resource.RLIMIT_CPU, cfg["cpu_secs"] + 1, cfg["cpu_secs"] + 2)
        cap(resource.RLIMIT_FSIZE, cfg["file_bytes"])
        cap(resource.RLIMIT_CORE, 0)
    except (OSError, ValueError) as e:
        sys.stderr.write("tbsim sandbox: could not apply the limits (%s)\n" % e)
        os._exit(125)


def _resident(status):
    """What the process holds in memory, from /proc/PID/status: private
    anonymous memory plus the shared memory it has mapped (MAP_SHARED
    anonymous mappings, mapped memfd and tmpfs files). Shared pages mapped by
    several processes count once per process, which errs towards stopping
    the script; smaps_rollup's PSS would split them fairly but costs ~0.5 ms
    per process per read (measured), too slow for a 10 ms poll."""
    total = 0
    for line in status.splitlines():
        if line.startswith((b"RssAnon:", b"RssShmem:")):
            total += int(line.split()[1]) * 1024
    return total


def _memfds(pid, seen):
    """Bytes of the memfd files the process holds open that are not yet in
    `seen` (memory no mapping shows until it is mapped)."""
    total = 0
    folder = "/proc/%s/fd" % pid
    try:
        fds = os.listdir(folder)
    except OSError:
        return 0
    for fd in fds:
        try:
            if not os.readlink("%s/%s" % (folder, fd)).startswith("/memfd:"):
                continue
            st = os.stat("%s/%s" % (folder, fd))
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if key not in seen:
            seen.add(key)
            total += max(st.st_size, st.st_blocks * 512)
    return total


def _census(with_fds):
    """Processes other than this one, their memory and CPU ticks (including
    the children they reaped). Memory counts shared memory and, with
    `with_fds`, memfd files held open."""
    count = memory = cpu = 0
    memfds = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or name == "1":
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
            with open("/proc/%s/status" % name, "rb") as f:
                status = f.read()
        except OSError:
            continue
        count += 1
        fields = stat[stat.rindex(b")") + 2:].split()
        if len(fields) > 14:
            cpu += sum(int(x) for x in fields[11:15])
        memory += _resident(status)
        if with_fds:
            memory += _memfds(name, memfds)
    return count, memory, cpu


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _tree(root):
    """Bytes (allocated or apparent, whichever is larger, so fallocate and
    sparse files both count) of the regular files under root, the entry
    count and the largest file. Walks by directory fds, one per level, so no
    depth (a path beyond PATH_MAX) hides anything; a tree too deep for our
    fds counts as over any entry cap."""
    import errno
    import stat

    size = entries = largest = 0
    try:
        top = os.open(root, _DIR_FLAGS)
    except OSError:
        return 0, 0, 0
    stack = []

    def enter(fd):
        try:
            stack.append((fd, os.listdir(fd)))
        except OSError:
            os.close(fd)

    enter(top)
    while stack:
        fd, names = stack[-1]
        if not names:
            os.close(fd)
            stack.pop()
            continue
        name = names.pop()
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        entries += 1
        if stat.S_ISDIR(st.st_mode):
            try:
                enter(os.open(name, _DIR_FLAGS, dir_fd=fd))
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE):
                    entries = float("inf")
        elif stat.S_ISREG(st.st_mode):
            used = max(st.st_size, st.st_blocks * 512)
            size += used
            largest = max(largest, st.st_size)
    for fd, _ in stack:
        os.close(fd)
    return size, entries, largest


def _filled(path, cap):
    """Whether the filesystem at path is full: out of inodes, out of space,
    or holding `cap` bytes (when it is a tmpfs sized a little over it)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False, False
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    space = st.f_bavail == 0 or (cap is not None and used >= cap)
    return space, st.f_files > 0 and st.f_favail == 0


def _kill_all():
    import signal

    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass


def _supervise(config):
    import json
    import signal
    import time

    cfg = json.loads(config)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        # PR_SET_DUMPABLE 0: /proc/1/fd (the status pipe) becomes unreadable
        # to processes without CAP_SYS_PTRACE, which the script lacks.
        if libc.prctl(4, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")
    except Exception as e:
        _fail("the supervisor could not protect its status channel (%s)" % e)
    _report("started")
    pid = os.fork()
    if pid == 0:
        _child(cfg, libc)
        return
    ticks = os.sysconf("SC_CLK_TCK")
    hits = []
    status = None
    tick = 0
    while status is None:
        while True:
            try:
                got, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                got, st = pid, 0
                status = status if status is not None else 0
                break
            if got == 0:
                break
            if got == pid:
                status = st
        if status is not None or hits:
            if hits:
                _kill_all()
                time.sleep(0.005)
            continue
        count, memory, cpu = _census(tick % 5 == 0)
        times = os.times()
        cpu_secs = cpu / ticks + times.children_user + times.children_system
        if count >= cfg["processes"] - 1:
            hits.append("processes")
        if cfg["memory"] > 0 and memory > cfg["memory"]:
            hits.append("memory")
        if cpu_secs > cfg["cpu_secs"]:
            hits.append("cpu")
        if tick % 5 == 0:
            size, entries, _ = _tree("/workspace")
            if size > cfg["workspace_bytes"]:
                hits.append("workspace")
            if entries > cfg["workspace_entries"]:
                hits.append("entries")
        tick += 1
        if hits:
            _kill_all()
        else:
            time.sleep(0.01)
    # The script is gone: nothing of it may outlive it.
    _kill_all()
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    if any(_filled("/tmp", None)):
        hits.append("tmp")
    if cfg["workspace_fs"]:
        # A capped tmpfs: full is the cap, whatever the polls saw.
        no_space, no_inodes = _filled("/workspace", cfg["workspace_bytes"])
        if no_space:
            hits.append("workspace")
        if no_inodes:
            hits.append("entries")
    if max(_tree("/workspace")[2], _tree("/tmp")[2]) >= cfg["file_bytes"]:
        hits.append("file_size")
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        hits.append("cpu")
    for hit in dict.fromkeys(hits):
        _report("limit " + hit)
    if os.WIFSIGNALED(status):
        report, code = "signal %d" % os.WTERMSIG(status), 128 + os.WTERMSIG(status)
    else:
        code = os.WEXITSTATUS(status)
        report = "exit %d" % code
    _report(report)
    os._exit(code)


if _config is not None:
    _supervise(_config)

import runpy
import traceback


# runpy would otherwise set sys.argv[0] to the script's temporary path.
class _KeepArgv0:
    def __init__(self, value):
        pass

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return False


if hasattr(runpy, "_ModifiedArgv0"):
    runpy._ModifiedArgv0 = _KeepArgv0

# Flush per line so output printed before a timeout is not lost in a buffer.
for _stream in (sys.stdout, sys.stderr):
    try:
        _stream.reconfigure(line_buffering=True)
    except Exception:
        pass

# A courtesy, not the boundary: ctypes and _posixsubprocess.fork_exec start
# processes without raising these events. Confinement comes from the
# namespaces and limits set up around this interpreter.
_NETWORK = frozenset({
    "socket.connect", "socket.bind", "socket.getaddrinfo",
    "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo",
    "socket.sendto", "socket.sendmsg", "urllib.Request",
})
_PROCESS = frozenset({
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork",
    "os.forkpty", "os.spawn", "pty.spawn",
})


def _guard(event, args):
    if event in _NETWORK:
        raise PermissionError("network access is disabled in run_python")
    if event in _PROCESS:
        raise PermissionError("starting processes is disabled in run_python")


sys.addaudithook(_guard)

try:
    runpy.run_path(_script, run_name="__main__")
except SystemExit:
    raise
except BaseException as exc:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != _script:
        tb = tb.tb_next
    report = traceback.TracebackException(type(exc), exc, tb)
    # Frames of the guard hook below are noise to the agent.
    report.stack = traceback.StackSummary.from_list(
        [frame for frame in report.stack if frame.filename != _prelude])
    sys.stderr.write("".join(report.format()))
    sys.stderr.flush()
    sys.exit(1)
