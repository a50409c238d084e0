"""Which isolation layers are active, from what the zygote actually managed to set up."""

from __future__ import annotations

from dataclasses import dataclass, field

LAYERS = ("user_namespace", "pid_namespace", "network_namespace", "mount_namespace", "ipc_namespace",
          "uts_namespace", "no_nested_namespaces", "no_file_watches", "fresh_pid_counter", "readonly_sysctls",
          "private_proc", "readonly_root", "unprivileged_candidate", "rlimits", "syscall_filter",
          "cgroup_limits", "scrubbed_environment", "wall_clock_kill", "capped_output",
          "thread_state_count", "program_code_watch")


@dataclass(frozen=True)
class IsolationReport:
    """layers: name → active. missing: the inactive ones. details: the raw zygote report."""

    layers: dict[str, bool]
    details: dict = field(default_factory=dict)

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(name for name in LAYERS if not self.layers.get(name))

    @property
    def fully_isolated(self) -> bool:
        return not self.missing

    def summary(self) -> str:
        active = [name for name in LAYERS if self.layers.get(name)]
        text = f"active: {', '.join(active)}"
        if self.missing:
            text += f"; MISSING: {', '.join(self.missing)}"
        errors = self.details.get("errors")
        if errors:
            text += f" ({'; '.join(errors)})"
        return text


def from_zygote(report: dict) -> IsolationReport:
    namespaced = bool(report.get("namespaces"))
    root = report.get("root") or {}
    layers = {
        "user_namespace": namespaced and bool(report.get("user_namespace")),
        "pid_namespace": namespaced and bool(report.get("pid1")),
        "network_namespace": namespaced,
        "mount_namespace": namespaced,
        "ipc_namespace": namespaced,
        "uts_namespace": namespaced,
        # The candidate cannot create namespaces of its own (kernel attack surface).
        "no_nested_namespaces": namespaced and bool(report.get("nested_namespaces_blocked")),
        # No inotify/fanotify instances: they count against the host user's small limit.
        "no_file_watches": namespaced and bool(report.get("file_watches_blocked")),
        # Every sample's pids start at 2: the pid counter carries nothing from one sample to the next.
        "fresh_pid_counter": namespaced and bool(report.get("pid_counter_reset")),
        # /proc/sys read-only: a rootless candidate (uid 0 of the namespace) owns its namespaces' sysctls.
        "readonly_sysctls": namespaced and bool(report.get("sysctls_sealed")),
        "private_proc": namespaced and bool(root.get("proc")),
        "readonly_root": namespaced and bool(root),
        # Either a distinct unprivileged uid, or uid 0 of a user namespace with every capability dropped.
        "unprivileged_candidate": report.get("child_uid") is not None or (namespaced and bool(report.get(
            "user_namespace"))),
        "rlimits": True,
        # Keyrings (shared by every sample of a uid) and other processes' rlimits: syscall_filter.py.
        "syscall_filter": bool(report.get("syscall_filter")),
        # Memory and process count of the whole sample (not just per process), and OOM detection.
        "cgroup_limits": bool(report.get("cgroup")),
        "scrubbed_environment": True,
        "wall_clock_kill": True,
        "capped_output": True,
        # unittest jobs refuse a call returning while any thread of the program's could still run
        # Python code, counted by the compiled counter (in_process_guard/thread_states.py).
        "thread_state_count": bool(report.get("thread_states")),
        # unittest jobs refuse the program's code run in the tests' thread outside its calls, seen by
        # the compiled watch (in_process_guard/outside_calls.py).
        "program_code_watch": bool(report.get("outside_calls")),
    }
    return IsolationReport(layers=layers, details=report)
