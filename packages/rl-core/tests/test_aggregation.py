import pytest
import torch

from coding_framework.rl_core import LOSS_AGGREGATIONS, GlobalBatch

LOSS = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # the third sequence is empty

BY_HAND = {
    "token-mean": (1 + 2 + 4) / 3,
    "token-sum": 7.0,
    "seq-mean-token-sum": (3 + 4) / 2,
    "seq-mean-token-mean": (1.5 + 4) / 2,
    "seq-mean-token-sum-norm": (3 + 4) / 2 / 3,  # L defaults to the padded length T = 3
}


@pytest.mark.parametrize("mode", LOSS_AGGREGATIONS)
def test_by_hand(mode):
    torch.testing.assert_close(LOSS_AGGREGATIONS[mode](LOSS, MASK), torch.tensor(BY_HAND[mode]))


def test_global_batch_counts_make_the_micro_batch_a_share_of_the_global_loss():
    agg = LOSS_AGGREGATIONS
    two_ranks = GlobalBatch(dp_size=2, num_tokens=14, num_sequences=4, norm_length=7)
    torch.testing.assert_close(agg["token-mean"](LOSS, MASK, batch=two_ranks), torch.tensor(7 / 14 * 2))
    torch.testing.assert_close(agg["token-sum"](LOSS, MASK, batch=two_ranks), torch.tensor(14.0))
    torch.testing.assert_close(
        agg["seq-mean-token-sum"](LOSS, MASK, batch=two_ranks), torch.tensor(7 / 4 * 2)
    )
    torch.testing.assert_close(
        agg["seq-mean-token-mean"](LOSS, MASK, batch=two_ranks), torch.tensor(5.5 / 4 * 2)
    )
    torch.testing.assert_close(
        agg["seq-mean-token-sum-norm"](LOSS, MASK, batch=two_ranks), torch.tensor(7 / 4 * 2 / 7)
    )


def test_micro_batch_shares_add_up_to_the_whole_batch_loss():
    g = torch.Generator().manual_seed(0)
    loss, mask = torch.randn(8, 5, generator=g), (torch.rand(8, 5, generator=g) > 0.3).float()
    tokens, sequences = mask.sum(), (mask.sum(-1) > 0).sum()
    for mode, fn in LOSS_AGGREGATIONS.items():
        whole = fn(loss, mask)
        shared = GlobalBatch(num_tokens=tokens, num_sequences=sequences)
        parts = sum(fn(loss[i : i + 3], mask[i : i + 3], batch=shared) for i in range(0, 8, 3))
        if mode == "token-sum":
            parts = sum(fn(loss[i : i + 3], mask[i : i + 3]) for i in range(0, 8, 3))
        torch.testing.assert_close(parts, whole, msg=mode)


@pytest.mark.parametrize("mode", LOSS_AGGREGATIONS)
def test_masked_tokens_contribute_nothing_even_when_nan(mode):
    poisoned = LOSS.masked_fill(~MASK.bool(), float("nan")).requires_grad_()
    value = LOSS_AGGREGATIONS[mode](poisoned, MASK)
    torch.testing.assert_close(value, torch.tensor(BY_HAND[mode]))
    value.backward()
    assert torch.isfinite(poisoned.grad).all()
    assert torch.equal(poisoned.grad[~MASK.bool()], torch.zeros(int((~MASK.bool()).sum())))


@pytest.mark.parametrize("mode", LOSS_AGGREGATIONS)
def test_an_all_masked_batch_gives_zero_not_nan(mode):
    loss = torch.ones(2, 3, requires_grad=True)
    value = LOSS_AGGREGATIONS[mode](loss, torch.zeros(2, 3))
    assert value.item() == 0.0
    value.backward()
    assert torch.equal(loss.grad, torch.zeros(2, 3))


@pytest.mark.parametrize(
    "mode", ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"]
)
def test_several_ranks_need_global_counts(mode):
    with pytest.raises(ValueError, match=r"GlobalBatch\.num_"):
        LOSS_AGGREGATIONS[mode](LOSS, MASK, batch=GlobalBatch(dp_size=2))


def test_global_batch_rejects_bad_values():
    with pytest.raises(ValueError, match="dp_size"):
        GlobalBatch(dp_size=0)
    with pytest.raises(ValueError, match="norm_length"):
        GlobalBatch(norm_length=0)
    with pytest.raises(ValueError, match="num_tokens"):
        GlobalBatch(num_tokens=-1)
    with pytest.raises(ValueError, match="shape mismatch"):
        LOSS_AGGREGATIONS["token-mean"](LOSS, MASK[:, :2])


# --- parity with VERL's agg_loss -----------------------------------------------------------------

GLOBAL_BATCHES = {
    "local": {},
    "two-ranks": {"dp_size": 2, "batch_num_tokens": 61, "global_batch_size": 23},
    "scale-factor": {"loss_scale_factor": 16},
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mask_dtype", [torch.float32, torch.bool])
@pytest.mark.parametrize("info", GLOBAL_BATCHES, ids=str)
@pytest.mark.parametrize("mode", LOSS_AGGREGATIONS)
def test_parity_with_verl_agg_loss(make_batch, seed, mask_dtype, info, mode):
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    b = make_batch(seed)
    mask = b.mask.to(mask_dtype)
    kwargs = GLOBAL_BATCHES[info]
    batch = GlobalBatch(
        dp_size=kwargs.get("dp_size", 1),
        num_tokens=kwargs.get("batch_num_tokens"),
        num_sequences=kwargs.get("global_batch_size"),
        norm_length=kwargs.get("loss_scale_factor"),
    )
    ours_in = b.advantages.clone().requires_grad_()
    theirs_in = b.advantages.clone().requires_grad_()
    ours = LOSS_AGGREGATIONS[mode](ours_in, mask, batch=batch)
    theirs = core_algos.agg_loss(theirs_in, mask, mode, **kwargs)
    torch.testing.assert_close(ours, theirs.to(ours.dtype), atol=1e-5, rtol=0)
    ours.backward()
    theirs.backward()
    torch.testing.assert_close(ours_in.grad, theirs_in.grad, atol=1e-5, rtol=0)
