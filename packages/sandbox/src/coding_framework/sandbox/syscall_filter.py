"""A seccomp filter the zygote installs once, for itself and every child it forks (filters are
inherited and cannot be removed): it refuses (EPERM) the few system calls that reach past a sample
through kernel state its other layers leave shared, or that open the kernel's riskiest code to it.

- Kernel keyrings (`add_key`, `request_key`, `keyctl`): the user keyring belongs to the uid, not to
  the process, so a key one sample adds is there for the next sample of the worker to read: a channel
  between samples, which must share nothing.
- `prlimit64` on another process: rlimits are checked by uid alone (no dumpability, no capability),
  and without a distinct sandbox uid (rootless: the candidate is uid 0 of the user namespace, as the
  zygote is) a candidate could set the zygote's own limits (`RLIMIT_NOFILE` = 4), breaking every later
  sample of its worker. A process's own limits (`pid` 0, what `setrlimit` sends) stay allowed.
- io_uring (`io_uring_setup`, `io_uring_enter`, `io_uring_register`) and `userfaultfd`: kernel code
  that no program run here needs and that is where most recent unprivileged kernel exploits start
  (io_uring runs operations in kernel workers; userfaultfd stalls the kernel mid-copy, at the moment an
  exploit chooses). Refused as container runtimes' default profiles do.
- System calls of another ABI (x86-64's x32 numbers, i386's `int 0x80`), which the numbers above
  would not catch.

Everything else that reaches other processes is already refused by the other layers (signals to PID
1, ptrace and /proc of the non-dumpable zygote, scheduling of a process holding more capabilities).
Not a general-purpose syscall allow-list: the candidate's Python needs the rest.
"""

from __future__ import annotations

import ctypes
import errno
import platform

# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian hosts only).
_NR, _ARCH, _ARG0_LOW = 0, 4, 16
# Classic BPF opcodes: load word at absolute offset; jump if equal / greater or equal; return.
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | errno.EPERM
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_X32_SYSCALL_BIT = 0x40000000

# machine -> (AUDIT_ARCH_*, {name: number}) for the calls refused outright, and prlimit64.
_TABLES = {
    "x86_64": (0xC000003E, {"add_key": 248, "request_key": 249, "keyctl": 250, "userfaultfd": 323,
                            "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}, 302),
    "aarch64": (0xC00000B7, {"add_key": 217, "request_key": 218, "keyctl": 219, "userfaultfd": 282,
                             "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}, 261),
}
REFUSED = ("add_key", "request_key", "keyctl", "userfaultfd", "io_uring_setup", "io_uring_enter",
           "io_uring_register")


class _Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn))]


def program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The filter for `machine` (platform.machine()) as (code, jt, jf, k) instructions; None for a
    machine we have no table for. Jumps are relative to the next instruction, as in classic BPF."""
    if machine not in _TABLES:
        return None
    arch, refused, prlimit64 = _TABLES[machine]
    numbers = [refused[name] for name in REFUSED]
    body: list[tuple[int, int, int, int]] = []
    # Layout: [arch check] [nr checks] ALLOW [prlimit: arg0 check] ALLOW DENY — with DENY last, each
    # jump to it is "how many instructions are left before it".
    body.append((_LD_ABS, 0, 0, _ARCH))
    body.append((_JEQ, 0, None, arch))  # jf -> DENY
    body.append((_LD_ABS, 0, 0, _NR))
    if machine == "x86_64":
        body.append((_JGE, None, 0, _X32_SYSCALL_BIT))  # jt -> DENY
    for number in numbers:
        body.append((_JEQ, None, 0, number))  # jt -> DENY
    body.append((_JEQ, 1, 0, prlimit64))  # jt -> the prlimit check, past the ALLOW below
    body.append((_RET, 0, 0, _RET_ALLOW))
    body.append((_LD_ABS, 0, 0, _ARG0_LOW))
    body.append((_JEQ, 0, None, 0))  # pid 0 (this process) -> ALLOW below; else DENY
    body.append((_RET, 0, 0, _RET_ALLOW))
    deny = len(body)
    body.append((_RET, 0, 0, _RET_EPERM))
    resolved = []
    for index, (code, jt, jf, k) in enumerate(body):
        to_deny = deny - index - 1
        resolved.append((code, to_deny if jt is None else jt, to_deny if jf is None else jf, k))
    return resolved


# rt_sigaction's number per machine, for refuse_signal_handlers.
_RT_SIGACTION = {"x86_64": 13, "aarch64": 134}
_ARG1_LOW, _ARG1_HIGH = 24, 28


def signal_handler_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """A filter refusing (EPERM) `rt_sigaction` with a new action, for `machine`; reading the current
    one (a NULL new action) stays allowed. None for a machine we have no table for."""
    if machine not in _TABLES:
        return None
    arch = _TABLES[machine][0]
    allow, deny = (_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, _RET_EPERM)
    # Indices: 0 load arch, 1 check, 2 load nr, 3 check, 4 load arg1 low, 5 check, 6 load arg1 high,
    # 7 check, 8 ALLOW, 9 DENY; a jump goes that many instructions past the next one.
    return [
        (_LD_ABS, 0, 0, _ARCH), (_JEQ, 0, 7, arch),  # another ABI: DENY
        (_LD_ABS, 0, 0, _NR), (_JEQ, 0, 4, _RT_SIGACTION[machine]),  # any other call: ALLOW
        (_LD_ABS, 0, 0, _ARG1_LOW), (_JEQ, 0, 3, 0),  # a new action (low half set): DENY
        (_LD_ABS, 0, 0, _ARG1_HIGH), (_JEQ, 0, 1, 0),  # high half set: DENY; NULL: ALLOW
        allow, deny,
    ]


def refuse_signal_handlers() -> bool:
    """Refuse, for the rest of this process and what it starts, every new signal action: the harness of
    unittest jobs calls it before the program runs. CPython calls a Python signal handler with the
    frame it interrupted, and frames lead to the harness's reporter: a program that could install one
    (`signal.signal`, or a fresh `_signal` module made from its spec) forged every report. False where
    the machine has no table or the kernel refuses."""
    return _install(signal_handler_program(platform.machine()))


def install() -> bool:
    """Install the filter on this (single-threaded) process, which must have no_new_privs set; False
    where this machine has no table or the kernel refuses (then the layer is reported missing)."""
    return _install(program(platform.machine()))


def _install(instructions: list[tuple[int, int, int, int]] | None) -> bool:
    if instructions is None:
        return False
    array = (_Insn * len(instructions))(*(_Insn(*insn) for insn in instructions))
    prog = _Prog(len(instructions), array)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    return libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) == 0
