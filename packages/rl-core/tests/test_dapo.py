import pytest
import torch

from coding_framework.rl_core import dynamic_sampling_keep, overlong_penalty


def test_dynamic_sampling_drops_groups_with_identical_scores():
    scores = torch.tensor([1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.7, 0.7, 0.5])
    groups = torch.tensor([0, 0, 0, 1, 1, 2, 2, 3, 3, 4])
    keep = dynamic_sampling_keep(scores, groups)
    # all-pass group 0, all-fail group 2 and constant partial-credit group 3 go; mixed group 1 and the
    # singleton 4 stay (VERL keeps groups of one).
    assert keep.tolist() == [False, False, False, True, True, False, False, False, False, True]


def test_dynamic_sampling_keeps_every_group_with_any_variance(make_batch):
    b = make_batch(5)  # continuous scores: no group is constant
    assert dynamic_sampling_keep(b.scores, b.group_ids).all()
    flat = torch.zeros_like(b.scores)
    keep = dynamic_sampling_keep(flat, b.group_ids)
    sizes = torch.bincount(b.group_ids)[b.group_ids]
    assert torch.equal(keep, sizes == 1)


@pytest.mark.parametrize(
    ("length", "expected"),
    [(0, 0.0), (80, 0.0), (81, -0.05), (90, -0.5), (100, -1.0), (101, -1.0), (500, -1.0)],
)
def test_overlong_penalty_is_the_papers_piecewise_line(length, expected):
    # L_max = 100, L_cache = 20: free up to 80 tokens, then −1/20 per token, floor −1 beyond 100.
    got = overlong_penalty(torch.tensor([length]), max_length=100, buffer_length=20)
    assert got.item() == pytest.approx(expected)


def test_overlong_penalty_factor_scales_it():
    got = overlong_penalty(torch.tensor([90, 120]), max_length=100, buffer_length=20, penalty_factor=0.5)
    torch.testing.assert_close(got, torch.tensor([-0.25, -0.5]))


def test_overlong_penalty_rejects_bad_settings():
    lengths = torch.tensor([1])
    with pytest.raises(ValueError, match="buffer_length"):
        overlong_penalty(lengths, max_length=100, buffer_length=0)
    with pytest.raises(ValueError, match="buffer_length"):
        overlong_penalty(lengths, max_length=100, buffer_length=101)
    with pytest.raises(ValueError, match="max_length"):
        overlong_penalty(lengths, max_length=0, buffer_length=1)
    with pytest.raises(ValueError, match="penalty_factor"):
        overlong_penalty(lengths, max_length=10, buffer_length=2, penalty_factor=-1)
