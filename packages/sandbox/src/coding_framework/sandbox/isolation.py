"""Linux isolation primitives (ctypes over libc: Python 3.11 has no os.unshare) and the sandbox root.

Used by the zygote (namespaces, root filesystem) and by each forked candidate child (rlimits, privilege
drop). Everything here either succeeds or raises OSError naming the syscall; callers decide how to
degrade, and say so in the isolation report.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import signal

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36

_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(platform.machine())
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

SANDBOX_UID = 65534  # `nobody`: the candidate's uid inside its user namespace (and on the host)
NAMESPACE_FLAGS = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(value: str | None) -> bytes | None:
    return None if value is None else os.fsencode(value)


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), f"unshare({flags:#x})")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {target}")


def umount(target: str, flags: int = MNT_DETACH) -> None:
    _check(_libc.umount2(_b(target), flags), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    if _SYS_PIVOT_ROOT is None:
        raise OSError(errno.ENOSYS, f"pivot_root: unknown syscall number on {platform.machine()}")
    _check(_libc.syscall(_SYS_PIVOT_ROOT, _b(new_root), _b(put_old)), "pivot_root")


def sethostname(name: str) -> None:
    data = name.encode()
    _check(_libc.sethostname(data, len(data)), "sethostname")


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def set_process_name(name: str) -> None:
    """The name `ps`, `top` and `perf` show for this process (truncated to 15 bytes)."""
    buf = ctypes.create_string_buffer(name.encode()[:15])
    _check(_libc.prctl(PR_SET_NAME, ctypes.addressof(buf), 0, 0, 0), "prctl(PR_SET_NAME)")


_pylib = ctypes.PyDLL(None)  # PyDLL keeps the GIL held across the call, as os.fork does


def fast_fork() -> int:
    """fork(2) without CPython's after-fork machinery, for the single-threaded zygote only.

    os.fork() re-initialises thread, import-lock and GIL state and runs every registered at-fork
    hook in the child; in a process with one thread none of that state can be held by anyone else,
    and skipping it saves ~0.5 ms of copy-on-write faults per sample (measured: 240 → 48 page
    faults). The one hook whose effect matters, `random`'s reseed, is redone by the caller.
    """
    pid = _pylib.fork()
    if pid < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"fork: {os.strerror(err)}")
    return pid


def raw_fork_function():
    """fast_fork's C function itself (returns the pid, or -1 with errno set): the zygote calls it
    without a Python frame around it."""
    return _pylib.fork


def release_free_heap() -> None:
    """Give free malloc pages back to the kernel: fewer pages for every fork to map and unmap."""
    trim = getattr(_libc, "malloc_trim", None)
    if trim is not None:
        trim(0)


M_ARENA_MAX = -8  # mallopt's parameter number (glibc malloc.h)


def memory_use() -> tuple[int, int]:
    """(address space, resident set) of this process in bytes, from /proc/self/statm."""
    with open("/proc/self/statm", "rb") as fh:
        size, resident = fh.read().split()[:2]
    page = os.sysconf("SC_PAGE_SIZE")
    return int(size) * page, int(resident) * page


def share_malloc_arena() -> bool:
    """Make every thread of this process, and of the children it forks, allocate from glibc's main
    arena. A thread's own arena reserves 64 MiB of address space, which RLIMIT_AS counts (with the 8
    MiB of its stack): at a 256 MiB limit a correct program could start only 4 threads. One arena
    costs threads some contention on its lock. True where set (glibc)."""
    mallopt = getattr(_libc, "mallopt", None)
    return mallopt is not None and mallopt(M_ARENA_MAX, 1) == 1


def set_parent_death_signal(sig: int = signal.SIGKILL) -> None:
    """Die with `sig` when the thread that forked us exits."""
    prctl(PR_SET_PDEATHSIG, sig)


def drop_capabilities() -> None:
    """Empty the bounding, effective, permitted and inheritable capability sets of this process."""
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break  # past the last capability this kernel knows
    if _SYS_CAPSET is None:
        raise OSError(errno.ENOSYS, f"capset: unknown syscall number on {platform.machine()}")
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.syscall(_SYS_CAPSET, header, data), "capset")


def drop_privileges(uid: int | None) -> None:
    """Become `uid` (all capabilities go with uid 0) or, with None, stay uid 0 of the user namespace
    but hold no capabilities. The caller has no_new_privs set already (the zygote sets it once for all
    its children), so nothing can regain privileges through execve."""
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    else:
        drop_capabilities()


def apply_constant_rlimits() -> None:
    """The limits every sample shares: no core dumps, no locked memory, no POSIX message queues."""
    for limit in (resource.RLIMIT_CORE, resource.RLIMIT_MEMLOCK, resource.RLIMIT_MSGQUEUE):
        resource.setrlimit(limit, (0, 0))


def apply_job_rlimits(cpu_s: int, memory_mb: int, max_processes: int, max_open_files: int,
                      max_file_bytes: int) -> None:
    """Lower this process's per-job rlimits (soft = hard, so the candidate cannot raise them back)."""
    setrlimit = resource.setrlimit
    # CPU: SIGXCPU at the soft limit, SIGKILL one second later if it is ignored.
    setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    setrlimit(resource.RLIMIT_NPROC, (max_processes, max_processes))
    setrlimit(resource.RLIMIT_NOFILE, (max_open_files, max_open_files))
    setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))


# statvfs flags that a bind mount inherits and a read-only remount in a user namespace must keep.
_LOCKED_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                 (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                 (os.ST_RELATIME, MS_RELATIME))


def _mount_flags_of(path: str) -> int:
    flags = os.statvfs(path).f_flag
    return sum(ms for st, ms in _LOCKED_FLAGS if flags & st)


def _mountpoints_under(prefix: str) -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            point = line.split()[4].replace("\\040", " ")
            if point == prefix or point.startswith(prefix.rstrip("/") + "/"):
                points.append(point)
    return points


def _bind_readonly(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    for point in _mountpoints_under(target):
        mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _mount_flags_of(point))


DEVICES = ("null", "zero", "full", "random", "urandom")
WORK_DIRS = ("/tmp", "/dev/shm")


def build_root(visible: list[str], hidden: list[str], staging: str = "/tmp") -> dict[str, object]:
    """Make this mount namespace's root a read-only view of `visible` host paths.

    Must run inside fresh user+mount+PID namespaces, as their root. Host paths outside `visible` do not
    exist in the new root; `hidden` paths inside it are covered by empty read-only mounts; /proc is
    this PID namespace's own; /tmp and /dev/shm are mount points for per-sample tmpfs work dirs.
    Returns what was set up, for the isolation report.
    """
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    # Sources are resolved through a descriptor of the old root: the staging tmpfs may shadow them.
    host = os.open("/", os.O_PATH | os.O_DIRECTORY)
    try:
        def src(path: str) -> str:
            return f"/proc/self/fd/{host}{path}"

        mount("cf-sandbox-root", staging, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        shown, missing = [], []
        for path in visible:
            if not os.path.lexists(src(path)):
                missing.append(path)
                continue
            target = staging + path
            if os.path.islink(src(path)):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                if not os.path.lexists(target):
                    os.symlink(os.readlink(src(path)), target)
                shown.append(path)
                continue
            if os.path.isdir(src(path)):
                os.makedirs(target, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                open(target, "a").close()
            _bind_readonly(src(path), target)
            shown.append(path)
        covered = []
        for path in hidden:
            target = staging + path
            if not os.path.lexists(target):
                continue
            if os.path.isdir(target):
                mount("cf-sandbox-hidden", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV,
                      "size=4k,mode=0555")
            else:
                _bind_readonly(src("/dev/null"), target)
            covered.append(path)
        os.makedirs(staging + "/dev", exist_ok=True)
        for name in DEVICES:
            open(f"{staging}/dev/{name}", "a").close()
            mount(src(f"/dev/{name}"), f"{staging}/dev/{name}", None, MS_BIND)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
            os.symlink(target, f"{staging}/dev/{name}")
        for work in WORK_DIRS:
            os.makedirs(staging + work, exist_ok=True)
        os.makedirs(staging + "/proc", exist_ok=True)
        proc_ok = True
        try:
            mount("proc", staging + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except OSError:
            proc_ok = False  # a host that overmounts parts of /proc refuses new proc mounts
        os.makedirs(staging + "/.old_root", exist_ok=True)
    finally:
        os.close(host)
    os.chdir(staging)
    pivot_root(".", ".old_root")
    os.chdir("/")
    umount("/.old_root", MNT_DETACH)
    os.rmdir("/.old_root")
    mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    return {"visible": shown, "missing": missing, "hidden": covered, "proc": proc_ok}


# Per-user-namespace limits: set to 0 inside the sandbox's user namespace, the candidate cannot make
# namespaces of its own (each one would hand it capabilities over fresh kernel objects to attack).
_NAMESPACE_SYSCTLS = ("user", "net", "mnt", "pid", "ipc", "uts", "cgroup", "time")


def block_nested_namespaces() -> bool:
    """Forbid new namespaces below this user namespace; True if every limit could be set."""
    limits = [(f"user/max_{kind}_namespaces", "0") for kind in _NAMESPACE_SYSCTLS]
    return _set_sysctls(limits, missing_ok=True)


def block_file_watches() -> bool:
    """No inotify or fanotify instance below this user namespace. The kernel charges each one to the
    user that created the namespace at every level up to the host (host root, for a pool run as root),
    whose limit is small (128 by default): a sample holding them kept that user's processes on the host,
    and the samples of every other worker, from watching files while it ran. True if both limits could
    be set (kernels before 5.13 have no unprivileged fanotify, and no limit for it)."""
    return _set_sysctls([("user/max_inotify_instances", "0"), ("user/max_fanotify_groups", "0")],
                        missing_ok=True)


def contain_sysv_ipc() -> bool:
    """Nothing a sample does in the IPC namespace reaches the next sample: no SysV shared memory
    segment, semaphore set or message queue can be made at all (no slots; multiprocessing and the like
    use POSIX ones, which live in the per-sample /dev/shm). Even one made and removed within a sample
    would leave its trace: the namespace's id counters move on, and the next sample's ids would tell how
    far. shm_rmid_forced stays as a second line. These sysctls belong to the sandbox's own IPC namespace.
    True if every one could be set."""
    settings = [("kernel/shm_rmid_forced", "1"), ("kernel/shmmni", "0"), ("kernel/msgmni", "0"),
                ("kernel/sem", "0 0 0 0")]
    return _set_sysctls(settings, missing_ok=False)


def seal_sysctls() -> bool:
    """Make /proc/sys read-only for this process and everything it forks, once every sysctl of the
    sandbox's namespaces is set; True if it could. Descriptors opened before stay writable (the pid
    counter's: open_pid_counter). Without it, a rootless sandbox's candidate, uid 0 of the user namespace
    like the zygote, owns the IPC, PID and network namespaces' sysctls even with no capability: it could
    raise shmmni again and leave SysV shared memory for the next sample (held until the pool closes, by
    no cgroup), or set pid_max, a number the next sample reads (red-team round 34). A read-only bind
    mount, which only a capability over the mount namespace could undo, closes them all at once."""
    try:
        _bind_readonly("/proc/sys", "/proc/sys")
    except OSError:
        return False
    return True


def _set_sysctls(settings: list[tuple[str, str]], *, missing_ok: bool) -> bool:
    """Write each `/proc/sys/<name>` value (of this process's namespaces); True if every one was set.
    `missing_ok`: a file this kernel does not have counts as set (older kernels lack some limits)."""
    ok = True
    for name, value in settings:
        try:
            with open(f"/proc/sys/{name}", "w") as fh:
                fh.write(value)
        except FileNotFoundError:
            ok = ok and missing_ok
        except OSError:
            ok = False
    return ok


def open_pid_counter() -> int | None:
    """A descriptor of this PID namespace's `ns_last_pid`, checked writable (needs CAP_SYS_ADMIN over
    the namespace: the zygote has it, its children do not), or None.

    The pid the kernel hands out next is the last one plus one, for the whole namespace: without a reset
    a sample could pass a number to the next sample of its worker by forking that many times (or read
    one from /proc/sys/kernel/ns_last_pid), a channel that needs nothing else. `reset_pid_counter`
    after every sample makes every sample's pids start at 2 again."""
    try:
        fd = os.open("/proc/sys/kernel/ns_last_pid", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        reset_pid_counter(fd)
    except OSError:
        os.close(fd)
        return None
    return fd


def reset_pid_counter(fd: int) -> None:
    """The next pid of the namespace is 2 (the zygote, PID 1, is its only process left)."""
    os.pwrite(fd, b"1", 0)


def mount_work_dir(path: str, size_mb: int) -> None:
    """A fresh, empty, size-capped tmpfs at `path` (inside the sandbox root). No access times: reading
    the directory would otherwise change it, a bit the next sample could read back."""
    options = f"size={size_mb}m,nr_inodes=16384,mode=1777"
    mount("cf-sandbox-work", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOATIME, options)


def unmount_work_dir(path: str) -> None:
    """Drop the tmpfs at `path`, if any; its memory is freed once no process uses it."""
    try:
        umount(path, MNT_DETACH)
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # EINVAL: nothing mounted there
            raise


def usage(path: str) -> tuple[int, ...]:
    """What a sample can change in the work dir at `path`: inodes and blocks in use, and the root
    directory's mode, owner and change and modification times. Equal to the values of the mount
    when it was fresh exactly when no sample has made, removed or changed anything in it (a file
    made and removed again leaves the counts as they were, but not the directory's times)."""
    st = os.statvfs(path)
    root = os.stat(path)
    return (st.f_files - st.f_ffree, st.f_blocks - st.f_bfree, root.st_mode, root.st_uid, root.st_gid,
            root.st_mtime_ns, root.st_ctime_ns)
