import torch

from coding_framework.rl_core import group_stats


def test_group_stats_match_per_group_torch_reductions(make_batch):
    b = make_batch(4)
    stats = group_stats(b.scores, b.group_ids)
    assert stats.num_groups == len(b.group_ids.unique())
    for g in b.group_ids.unique():
        members = b.group_ids == g
        x = b.scores[members].double()
        assert torch.all(stats.size[members] == members.sum())
        torch.testing.assert_close(stats.mean[members], x.mean().expand(len(x)))
        torch.testing.assert_close(stats.centred[members], x - x.mean())
        expected_std = x.std() if len(x) > 1 else torch.tensor(0.0, dtype=torch.float64)
        torch.testing.assert_close(stats.std[members], expected_std.expand(len(x)))
        assert bool(stats.constant[members].all()) == (len(x) == 1)


def test_group_ids_need_not_be_dense_or_sorted():
    stats = group_stats(torch.tensor([1.0, 2.0, 3.0, 5.0]), torch.tensor([90, -4, 90, -4]))
    assert stats.num_groups == 2
    assert stats.index[0] == stats.index[2] and stats.index[1] == stats.index[3]
    torch.testing.assert_close(stats.mean, torch.tensor([2.0, 3.5, 2.0, 3.5], dtype=torch.float64))
    assert not stats.constant.any()
