"""Each isolation layer, observed from inside the sandbox and from the host."""

from __future__ import annotations

import ast
import ctypes
import errno
import os
import warnings

import pytest
from conftest import GOOD, assert_pool_healthy

from coding_framework.sandbox import (
    FunctionCallJob,
    Limits,
    ProgramJob,
    SandboxDegradedWarning,
    SandboxPool,
    SandboxStartError,
    Status,
)
from coding_framework.sandbox.cgroups import find_dirs, sweep_stale


def probe(pool, code: str, **kwargs):
    """Run `code` as a program; its last stdout line is a Python literal it computed inside."""
    verdict = pool.run(ProgramJob(program=code, **kwargs))
    assert verdict.status is Status.PASSED, verdict
    return ast.literal_eval(verdict.stdout.strip().splitlines()[-1])


def probe_call(pool, code: str):
    """As `probe`, from inside a function call: unlike a program, which finds its own main.py in the work
    dir, a function-call sample starts with the work dir exactly as the previous sample left it or fresh."""
    body = "".join(f"    {line}\n" for line in code.splitlines())
    verdict = pool.run(FunctionCallJob(program=f"def f():\n{body}", entry_point="f", test="f()\n"))
    assert verdict.status is Status.PASSED, verdict
    return ast.literal_eval(verdict.stdout.strip().splitlines()[-1])


def test_report_lists_every_layer_as_active(pool):
    report = pool.isolation_report()
    assert report.fully_isolated, report.summary()
    assert report.missing == ()
    assert report.details["root"]["proc"] is True


def test_network_namespace_is_empty(pool):
    interfaces = probe(pool, "import socket\nprint(sorted(n for _, n in socket.if_nameindex()))")
    assert interfaces == ["lo"]
    flags = probe(pool, "import fcntl, socket, struct\ns = socket.socket()\n"
                        "req = struct.pack('16sh', b'lo', 0)\n"
                        "print(struct.unpack('16sh', fcntl.ioctl(s, 0x8913, req))[1])")  # SIOCGIFFLAGS
    assert flags & 1 == 0  # IFF_UP clear: not even loopback works inside


def test_pid_namespace_shows_only_the_sandbox(pool):
    pids = probe(pool, "import os\nprint([os.getpid(), os.getppid(), "
                       "sorted(int(p) for p in os.listdir('/proc') if p.isdigit())])")
    own, parent, visible = pids
    assert parent == 1 and set(visible) <= {1, own} and own != os.getpid()


def test_mount_namespace_root_is_read_only_and_work_dir_private(pool):
    result = probe(pool, "import os\nout = {}\n"
                         "for p in ('/usr/owned', '/etc/owned', '/owned'):\n"
                         "    try:\n        open(p, 'w')\n        out[p] = 'written'\n"
                         "    except OSError as e:\n        out[p] = e.errno\n"
                         "open('/tmp/ok', 'w').write('x')\nout['cwd'] = os.getcwd()\n"
                         "out['tmp'] = sorted(os.listdir('/tmp'))\nprint(out)")
    import errno

    assert {result[p] for p in ("/usr/owned", "/etc/owned", "/owned")} <= {errno.EROFS, errno.EACCES}
    assert result["cwd"] == "/tmp" and result["tmp"] == ["main.py", "ok"]  # a program finds its own file
    # The next sample starts with an empty work dir.
    assert probe_call(pool, "import os\nprint(sorted(os.listdir('/tmp')))") == []


def test_work_dirs_left_dirty_are_replaced_by_fresh_mounts(pool):
    # The zygote keeps a work-dir tmpfs across samples only while it is provably empty; anything left in
    # it (files, hidden or unreadable dirs, symlinks, in /tmp or /dev/shm) gets a fresh mount instead.
    dirty = ("import os\nos.makedirs('/tmp/.hidden/deep')\nopen('/tmp/.hidden/deep/f', 'w').write('x')\n"
             "os.symlink('/etc/passwd', '/tmp/link')\nos.mkdir('/tmp/locked')\nos.chmod('/tmp/locked', 0)\n"
             "open('/dev/shm/seg', 'wb').write(b'y' * 5000)\n"
             "print([os.statvfs(p).f_files - os.statvfs(p).f_ffree for p in ('/tmp', '/dev/shm')])")
    written = probe(pool, dirty)
    assert written[0] >= 5 and written[1] >= 2  # the inodes really were created
    fresh = ("import os\nprint([(sorted(os.listdir(p)), os.statvfs(p).f_files - os.statvfs(p).f_ffree,"
             " os.statvfs(p).f_blocks - os.statvfs(p).f_bfree) for p in ('/tmp', '/dev/shm')])")
    for _ in range(2 * pool.workers):  # every worker, whichever ran the dirty sample
        assert probe_call(pool, fresh) == [([], 1, 0), ([], 1, 0)]


def test_the_working_directory_is_the_fresh_work_dir_too(pool):
    # A file left through a relative path must not be found through the next sample's cwd (which it
    # would be if the cwd still pointed into the replaced mount).
    assert probe(pool, "open('left', 'w').write('x')\nprint(1)") == 1
    here = ("import os\nprint([os.getcwd(), sorted(os.listdir('.')), "
            "os.stat('.').st_dev == os.stat('/tmp').st_dev])")
    for _ in range(2 * pool.workers):
        assert probe_call(pool, here) == ["/tmp", [], True]


def test_candidate_processes_get_a_high_oom_score(pool):
    assert probe(pool, "print(open('/proc/self/oom_score_adj').read().strip())") == 1000


def test_host_paths_outside_the_allow_list_do_not_exist(pool):
    missing = probe(pool, "import os\nprint([p for p in ('/root/.bashrc', '/work/main/packages', '/home', "
                          "'/var', '/etc/shadow', '/etc/hostname', '/run') if not os.path.exists(p)])")
    assert set(missing) >= {"/work/main/packages", "/etc/shadow", "/var", "/run"}
    assert all(os.path.exists(p) for p in missing)  # they do exist on the host


def test_ipc_and_uts_namespaces(pool):
    hostname = probe(pool, "import socket\nprint(repr(socket.gethostname()))")
    assert hostname == "sandbox" and os.uname().nodename != "sandbox"
    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(0, 4096, 0o600 | 0o1000)  # IPC_PRIVATE, IPC_CREAT: a host SysV segment
    assert shmid >= 0
    try:
        with open("/proc/sysvipc/shm") as fh:
            assert len(fh.read().splitlines()) >= 2
        lines = probe(pool, "print(len(open('/proc/sysvipc/shm').read().splitlines()))")
        assert lines == 1  # the header only: the host's segments are not in this IPC namespace
    finally:
        libc.shmctl(shmid, 0, None)  # IPC_RMID


def test_sysv_ipc_objects_do_not_outlive_their_sample(pool):
    # The IPC namespace is the zygote's, shared by its samples: nothing made there may carry over, not
    # even the id counters a segment made and removed moves on. No SysV object can be made at all.
    make = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "shm = libc.shmget(4242, 4096, 0o1666)\nsem = libc.semget(4243, 1, 0o1666)\n"
            "msg = libc.msgget(4244, 0o1666)\nprint([shm, sem, msg])")
    look = "print(len(open('/proc/sysvipc/shm').read().splitlines()))"
    assert pool.isolation_report().details["sysv_ipc_contained"] is True
    assert all(probe(pool, make) == [-1, -1, -1] for _ in range(2 * pool.workers))
    assert all(probe(pool, look) == 1 for _ in range(2 * pool.workers))  # the header only



def test_pid_counter_carries_nothing_from_one_sample_to_the_next(pool):
    # The pid counter is the PID namespace's, which a worker's samples share: a sample forking k times
    # told the next sample k through its own pid or /proc/sys/kernel/ns_last_pid (a covert channel).
    code = ("import os\nseen = [os.getpid(), int(open('/proc/sys/kernel/ns_last_pid').read())]\n"
            "for _ in range({k}):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
            "    os.waitpid(pid, 0)\nprint(seen)")
    assert pool.isolation_report().layers["fresh_pid_counter"] is True
    seen = [probe(pool, code.format(k=k)) for k in (5, 0, 17, 3, 9, 1) * pool.workers]
    assert seen == [seen[0]] * len(seen) and seen[0][0] == seen[0][1], seen


def test_work_dir_keeps_no_trace_of_a_file_made_and_removed(pool):
    # Counts alone say "clean" after a file is made and removed; the inode counter and the directory's
    # times do not, and the next sample read them. Reading the directory must not change it either.
    code = ("import os\nst = os.stat('/tmp')\nfd = os.open('/tmp/first', os.O_CREAT | os.O_WRONLY)\n"
            "ino = os.fstat(fd).st_ino\nos.close(fd)\nos.unlink('/tmp/first')\n"
            "print([ino, st.st_atime_ns == st.st_mtime_ns == st.st_ctime_ns])")
    churn = ("import os\nos.listdir('/tmp')\nos.listdir('/dev/shm')\n"
             "for i in range({k}):\n    open(f'/tmp/f{{i}}', 'w').close()\n    os.unlink(f'/tmp/f{{i}}')\n"
             "print(1)")
    seen = []
    for k in (7, 0, 30, 2) * pool.workers:  # function calls: a program's own main.py dirties the dir
        seen.append(probe_call(pool, code))
        assert probe_call(pool, churn.format(k=k)) == 1
    assert seen == [seen[0]] * len(seen) and seen[0][1] is True, seen


def test_kernel_keyrings_carry_nothing_from_one_sample_to_the_next(pool):
    # The user keyring is the uid's, not the process's: a key one sample added was readable by the
    # next sample of the worker. The zygote's seccomp filter refuses the keyring calls outright.
    add = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
           "key = libc.syscall(248, b'user', b'cf-probe', b'from-sample-one', 15, -4)\n"
           "print([key, ctypes.get_errno()])")
    find = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "print([libc.syscall(250, 10, -4, b'user', b'cf-probe', 0), ctypes.get_errno()])")
    assert pool.isolation_report().layers["syscall_filter"] is True
    assert all(probe(pool, add) == [-1, errno.EPERM] for _ in range(2 * pool.workers))
    assert all(probe(pool, find) == [-1, errno.EPERM] for _ in range(2 * pool.workers))


def test_io_uring_and_userfaultfd_are_refused(pool):
    # Kernel code no program here needs, where most unprivileged kernel exploits start: the same filter
    # refuses it. (Outside the sandbox both work on this kernel: the refusal is the filter's.)
    code = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "params = ctypes.create_string_buffer(120)\nout = []\n"
            "for args in ((425, 8, params), (426, 0, 0, 0, 0, 0, 0), (427, 0, 0, 0, 0), (323, 1)):\n"
            "    out.append([libc.syscall(*args), ctypes.get_errno()])\nprint(out)")
    assert probe(pool, code) == [[-1, errno.EPERM]] * 4


def test_file_watches_cannot_be_made(pool):
    # Each inotify/fanotify instance counted against the host user's limit (128): a sample holding them
    # kept host processes of that user, and other workers' samples, from watching files.
    code = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nout = []\n"
            "for fd in (libc.inotify_init(), libc.fanotify_init(0x200, 0)):\n"
            "    out.append([fd, ctypes.get_errno()])\nprint(out)")
    assert pool.isolation_report().layers["no_file_watches"] is True
    inotify, fanotify = probe(pool, code)
    assert inotify == [-1, errno.EMFILE] and fanotify[0] == -1 and fanotify[1] in (errno.EMFILE, errno.EPERM)


@pytest.fixture(scope="module")
def one_worker():
    """Samples that must share a worker, one after another."""
    with SandboxPool(workers=1, limits=Limits(timeout_s=5.0), require_isolation=True) as p:
        yield p


def test_stdin_of_function_calls_carries_nothing_from_one_sample_to_the_next(one_worker):
    # Function-call children's stdin was the zygote's own open /dev/null: status flags, a signal number
    # (F_SETSIG) and a flock one sample set on it were there for the next (and the lock on the host's
    # /dev/null lasted as long as the pool).
    state = "[fcntl.fcntl(0, 11), fcntl.fcntl(0, fcntl.F_GETFL) & os.O_NONBLOCK > 0]"
    mark = FunctionCallJob(
        program="import fcntl, os\nfcntl.fcntl(0, 10, 42)\nfcntl.fcntl(0, fcntl.F_SETFL, os.O_NONBLOCK)\n"
                f"fcntl.flock(0, fcntl.LOCK_EX)\ndef f():\n    return {state}\n",
        entry_point="f", test="assert candidate() == [42, True]\n")
    read = FunctionCallJob(
        program="import fcntl, os\ndef f():\n    try:\n"
                "        fcntl.flock(0, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
                f"    except OSError:\n        return 'locked'\n    return {state}\n",
        entry_point="f", test="assert candidate() == [0, False], candidate()\n")
    verdicts = [one_worker.run(job) for job in (read, mark, read, mark, read)]
    assert [v.status for v in verdicts] == [Status.PASSED] * 5, verdicts


@pytest.mark.skipif(not os.path.exists("/proc/self/autogroup"), reason="kernel without scheduler autogroups")
def test_scheduling_priority_carries_nothing_from_one_sample_to_the_next(one_worker):
    # A sample's session autogroup is its worker's (judge, zygote, every sample): made dumpable again, a
    # sample owned /proc/self/autogroup and set nice 19 there, which slowed every later sample of the
    # worker into time-outs. The judge puts it back after each job.
    # (The kernel takes one such write per 0.1 s from unprivileged processes, host-wide: EAGAIN.)
    lower = ("import ctypes, os, time\nctypes.CDLL(None).prctl(4, 1, 0, 0, 0)\n"  # PR_SET_DUMPABLE
             "fd = os.open('/proc/self/autogroup', os.O_WRONLY)\n"
             "for _ in range(40):\n    try:\n        os.write(fd, b'19')\n        break\n"
             "    except BlockingIOError:\n        time.sleep(0.05)\n"
             "print(repr(open('/proc/self/autogroup').read().split()[-1]))")
    read = "print(repr(open('/proc/self/autogroup').read().split()[-1]))"
    seen = [probe(one_worker, code) for code in (read, lower, read, lower, read)]
    assert seen == ["0", "19", "0", "19", "0"]


def test_limits_of_other_processes_cannot_be_changed(pool):
    # rlimits are checked by uid alone: a rootless candidate (uid 0 of the namespace, like the zygote)
    # could set the zygote's (RLIMIT_NOFILE = 4 broke every later sample). Its own stay settable.
    code = ("import os, resource\nown = resource.prlimit(0, resource.RLIMIT_NOFILE)\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\nrefused = []\n"
            "for pid in (1, os.getpid()):\n    try:\n"
            "        resource.prlimit(pid, resource.RLIMIT_NOFILE, (4, 4))\n"
            "    except OSError as exc:\n        refused.append(exc.errno)\n"
            "print([own[0] > 64, resource.getrlimit(resource.RLIMIT_NOFILE), refused])")
    assert probe(pool, code) == [True, (64, 64), [errno.EPERM, errno.EPERM]]

def test_candidate_cannot_create_namespaces(pool):
    flags = (0x10000000, 0x40000000, 0x00020000, 0x20000000)
    results = probe(pool, f"import ctypes\nprint([ctypes.CDLL(None).unshare(f) for f in {flags}])")
    assert results == [-1, -1, -1, -1]  # user, net, mount, pid


def test_candidate_is_unprivileged(pool):
    uid, caps, dumpable = probe(pool, "import os, ctypes\ncaps = [l for l in open('/proc/self/status') "
                                      "if l.startswith('CapEff')][0].split()[1]\n"
                                      "print([os.getuid(), caps, ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)])")
    assert uid == 65534 and int(caps, 16) == 0 and dumpable == 0


def test_environment_is_scrubbed(pool):
    env = probe(pool, "import os\nprint(dict(os.environ))")
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "USER", "LOGNAME", "OMP_NUM_THREADS",
                        "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MPLBACKEND", "PYTHONDONTWRITEBYTECODE",
                        "PYTHONIOENCODING"}
    assert env["HOME"] == "/tmp"


def test_rlimits_are_applied(pool):
    limits = Limits(timeout_s=3, memory_mb=300, max_processes=7, max_open_files=33, max_file_bytes=12345)
    got = probe(pool, "import resource as r\nprint({n: r.getrlimit(getattr(r, n)) for n in "
                      "('RLIMIT_CPU', 'RLIMIT_AS', 'RLIMIT_NPROC', 'RLIMIT_NOFILE', 'RLIMIT_FSIZE', "
                      "'RLIMIT_CORE')})",
                limits=limits)
    # The address space the zygote's preloaded modules hold is not the sample's (zygote.py): with the
    # default preload (the standard library's common modules) each worker's zygote measures its own,
    # 0 or 1 MiB here (exactly, with one worker: test_preloaded_libraries_are_...).
    soft, hard = got["RLIMIT_AS"]
    assert soft == hard and 300 << 20 <= soft < (300 + 64) << 20 and soft % (1 << 20) == 0, got
    assert got["RLIMIT_CPU"] == (3, 4)
    assert got["RLIMIT_NPROC"] == (7, 7) and got["RLIMIT_NOFILE"] == (33, 33)
    assert got["RLIMIT_FSIZE"] == (12345, 12345) and got["RLIMIT_CORE"] == (0, 0)


def test_preloaded_libraries_are_loaded_inside_the_sandbox_and_are_not_the_samples_memory():
    # pandas starts pyarrow's allocator thread at import, and a process with a second thread cannot
    # make a user namespace: preloaded before unsharing (as up to sandbox 0.3.1), it cost that layer.
    with SandboxPool(workers=1, preload=("numpy", "pandas"), require_isolation=True) as preloaded:
        report = preloaded.isolation_report()
        assert report.fully_isolated, report.summary()
        assert report.details["preload_failed"] == []
        allowance = report.details["preload_allowance_mb"]
        assert allowance > 128, report.details  # pandas and numpy map hundreds of MiB
        # Already loaded when the sample starts; the sample may still map its whole limit of its own.
        limits = Limits(timeout_s=20, memory_mb=128)
        program = ("import sys\nloaded = 'pandas' in sys.modules\nimport pandas, resource\n"
                   "block = bytearray(96 << 20)\n"
                   "print((loaded, resource.getrlimit(resource.RLIMIT_AS)[0] >> 20, len(block) >> 20))")
        assert probe(preloaded, program, limits=limits) == (True, 128 + allowance, 96)
        # The zygote's threads (pyarrow's) count in the cgroup's pids, but not against the sample's.
        forks = ("import os, time\nn = 0\ntry:\n    for _ in range(3):\n        if os.fork() == 0:\n"
                 "            time.sleep(30)\n        n += 1\nexcept OSError:\n    pass\nprint(n)")
        assert probe(preloaded, forks, limits=Limits(timeout_s=20, max_processes=4)) == 3
        # numpy's global generator is seeded afresh for every sample, as at import in a new interpreter.
        draws = [probe(preloaded, "import numpy\nprint(int(numpy.random.randint(1 << 62)))")
                 for _ in range(3)]
        assert len(set(draws)) == 3, draws


def test_cgroup_caps_the_memory_of_all_processes_together(pool):
    # Each process stays under its own RLIMIT_AS; together they exceed the sample's memory limit.
    program = ("import os, time\n"
               "for _ in range(6):\n    if os.fork() == 0:\n        x = bytearray(100 << 20)\n"
               "        for i in range(0, len(x), 4096):\n            x[i] = 1\n        time.sleep(10)\n"
               "time.sleep(10)\n")
    verdict = pool.run(ProgramJob(program=program, limits=Limits(memory_mb=160, timeout_s=2)))
    assert pool.isolation_report().layers["cgroup_limits"]
    assert verdict.status is Status.MEMORY and "OOM-killed" in verdict.message


def test_memory_a_sample_leaves_charged_does_not_fail_a_next_sample_with_a_lower_limit(one_worker):
    # memfds sent in a cycle of unix sockets stay charged to the worker's cgroup after the sample is
    # gone, until the kernel's collector frees them (~1 s here); lowering the memory limit under that
    # charge failed (EBUSY) and the next samples with a lower limit (a server: each request its own)
    # were sandbox errors. The worker now moves to a fresh cgroup.
    leak = ProgramJob(program=(
        "import array, os, socket\n"
        "for _ in range(4):\n    fds = []\n    for _ in range(10):\n        fd = os.memfd_create('m')\n"
        "        os.pwrite(fd, b'1' * (16 << 20), 0)\n        fds.append(fd)\n"
        "    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "    rights = array.array('i', [a.fileno(), *fds])\n"
        "    b.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])\n"
        "    a.detach()\n    b.close()\n    for fd in fds:\n        os.close(fd)\n"),
        limits=Limits(memory_mb=1024, timeout_s=20))
    small = ProgramJob(program="x = bytearray(50 << 20)\nprint('ok')\n", limits=Limits(memory_mb=256))
    (usage,) = [f"{d}/{name}" for d in find_dirs(one_worker._workers[0].cgroup_name)
                for name in ("memory.usage_in_bytes", "memory.current") if os.path.exists(f"{d}/{name}")]
    charged = []
    for _ in range(3):
        assert one_worker.run(leak).status is Status.PASSED
        with open(usage) as fh:  # the same path after the worker's cgroup is made again
            charged.append(int(fh.read()) >> 20)
        verdict = one_worker.run(small)
        assert (verdict.status, verdict.stdout) == (Status.PASSED, "ok\n"), verdict
    assert max(charged) > 512, charged  # the case arose: the leak was still charged after its sample


def test_file_size_limit_stops_big_writes(pool):
    verdict = pool.run(ProgramJob(program="open('/tmp/big', 'wb').write(b'x' * 100000)\n",
                                  limits=Limits(max_file_bytes=1000)))
    assert verdict.status is Status.ERROR and "File too large" in verdict.stderr


def test_process_limit_stops_a_fork_loop_quickly(pool):
    code = ("import os\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            import time\n"
            "            time.sleep(30)\n        n += 1\nexcept OSError:\n    pass\nprint(n)")
    forked = probe(pool, code, limits=Limits(max_processes=8, timeout_s=5))
    assert 1 <= forked <= 8


def test_cpu_limit_ends_a_busy_loop_even_with_a_long_wall_limit(pool):
    verdict = pool.run(ProgramJob(program="while True:\n    pass\n", limits=Limits(timeout_s=8, cpu_s=1)))
    assert verdict.status is Status.TIMEOUT and verdict.duration_s < 6
    assert "CPU" in verdict.message


def test_degraded_host_warns_loudly_and_reports_what_is_missing():
    with pytest.warns(SandboxDegradedWarning, match="DEGRADED") as caught:  # noqa: SIM117
        with SandboxPool(workers=1, use_namespaces=False) as degraded:
            report = degraded.isolation_report()
            assert degraded.run(GOOD).passed
    assert {"network_namespace", "pid_namespace", "mount_namespace"} <= set(report.missing)
    assert "network_namespace" in str(caught[0].message)


def test_required_isolation_refuses_to_start_when_degraded():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SandboxStartError, match="require_isolation"):
            SandboxPool(workers=1, use_namespaces=False, require_isolation=True)


def test_pool_survives_everything_above(pool):
    assert_pool_healthy(pool)


def test_stale_worker_cgroups_of_dead_pools_are_swept(pool):
    assert pool.isolation_report().layers["cgroup_limits"]
    dead = 2**22 + 12345  # above pid_max's default range: no such process
    assert not os.path.exists(f"/proc/{dead}")
    name = f"cf-sandbox-{dead}-0-test"
    parent = os.path.dirname(find_dirs(pool._workers[0].cgroup_name)[0])
    os.mkdir(os.path.join(parent, name))
    live = find_dirs(pool._workers[0].cgroup_name)
    assert sweep_stale() >= 1
    assert not os.path.exists(os.path.join(parent, name))
    assert all(os.path.isdir(d) for d in live)  # a live pool's cgroups are untouched


def test_python_under_a_work_dir_is_reported_as_shadowed():
    from coding_framework.sandbox.filesystem import shadowed_by_work_dirs

    paths = ["/usr", "/tmp/ci/.venv", "/tmpfoo/venv", "/dev/shm/x", "/opt/tmp/venv"]
    assert shadowed_by_work_dirs(paths) == ["/tmp/ci/.venv", "/dev/shm/x"]
