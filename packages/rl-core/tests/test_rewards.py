import pytest
import torch

from coding_framework.rl_core import RunningRewardNormalizer, clip_rewards, whiten


def test_clip_rewards():
    torch.testing.assert_close(clip_rewards(torch.tensor([-3.0, 0.2, 9.0])), torch.tensor([-1.0, 0.2, 1.0]))
    torch.testing.assert_close(
        clip_rewards(torch.tensor([-3.0, 9.0]), low=0.0, high=5.0), torch.tensor([0.0, 5.0])
    )
    with pytest.raises(ValueError, match="low < high"):
        clip_rewards(torch.zeros(2), low=1.0, high=1.0)


def test_whiten_by_hand():
    values, mask = torch.tensor([1.0, 2.0, 3.0, 100.0]), torch.tensor([1.0, 1.0, 1.0, 0.0])
    torch.testing.assert_close(whiten(values, mask), torch.tensor([-1.0, 0.0, 1.0, 0.0]), atol=1e-6, rtol=0)
    torch.testing.assert_close(
        whiten(values, mask, shift_mean=False), torch.tensor([1.0, 2.0, 3.0, 0.0]), atol=1e-6, rtol=0
    )
    with pytest.raises(ValueError, match="at least 2"):
        whiten(values, torch.tensor([0.0, 1.0, 0.0, 0.0]))


@pytest.mark.parametrize("shift_mean", [True, False])
def test_whiten_matches_verl_masked_whiten(make_batch, shift_mean):
    verl_F = pytest.importorskip("verl.utils.torch_functional")
    b = make_batch(6)
    ours = whiten(b.values, b.mask, shift_mean=shift_mean)
    theirs = verl_F.masked_whiten(b.values, b.mask, shift_mean=shift_mean)
    torch.testing.assert_close(ours, theirs * b.mask, atol=1e-5, rtol=0)


def test_running_normalizer_statistics_do_not_depend_on_batching():
    g = torch.Generator().manual_seed(0)
    stream = torch.randn(1000, generator=g) * 3 + 5
    one, many = RunningRewardNormalizer(), RunningRewardNormalizer()
    one.update(stream)
    for chunk in stream.split([1, 7, 100, 2, 400, 490]):
        many.update(chunk)
    assert many.count == one.count == 1000
    assert many.mean == pytest.approx(float(stream.double().mean()), abs=1e-9)
    assert many.std == pytest.approx(float(stream.double().std(unbiased=False)), abs=1e-9)
    assert one.mean == pytest.approx(many.mean, abs=1e-9) and one.std == pytest.approx(many.std, abs=1e-9)


def test_running_normalizer_maps_into_minus_one_one():
    norm = RunningRewardNormalizer(clip_sigmas=2.0)
    rewards = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 40.0])
    out = norm(rewards)
    assert (out >= -1).all() and (out <= 1).all() and out[-1] == 1.0
    expected = (rewards - norm.mean) / (2.0 * norm.std)
    torch.testing.assert_close(out[:-1], expected[:-1].clamp(-1, 1))


def test_running_normalizer_state_round_trip_and_errors():
    norm = RunningRewardNormalizer()
    with pytest.raises(RuntimeError, match="update"):
        norm.normalize(torch.zeros(1))
    norm.update(torch.tensor([1.0, 2.0, 4.0]))
    restored = RunningRewardNormalizer()
    restored.load_state_dict(norm.state_dict())
    x = torch.tensor([0.0, 3.0])
    torch.testing.assert_close(restored.normalize(x), norm.normalize(x))
    with pytest.raises(ValueError, match="NaN"):
        norm.update(torch.tensor([float("nan")]))
    with pytest.raises(KeyError, match="m2"):
        restored.load_state_dict({"count": 1, "mean": 0.0})
    with pytest.raises(ValueError, match="clip_sigmas"):
        RunningRewardNormalizer(clip_sigmas=0)
