"""The ideal instrument and MART through the package (ctis's S2 tiny case)."""

import numpy as np
import pytest
from conftest import tiny_instrument_parameters, tiny_scene

import spart


@pytest.fixture(scope="module")
def instrument():
    return spart.IdealInstrument(**tiny_instrument_parameters())


def test_shapes_and_operators(instrument):
    assert instrument.num_channel == 2
    assert instrument.shape_scene == (4, 8, 8) and instrument.shape_images == (2, 32, 16)
    scene = tiny_scene()
    images, widths = instrument.image(scene, uncertainty=True)
    assert images.shape == (2, 32, 16) and np.all(widths >= 0)
    forward = instrument.forward
    # the scene is shared by the channels: an axis of length 1 in front
    assert forward.shape_input == (1, 4, 8, 8)
    assert np.array_equal(np.maximum(forward(scene[None]).reshape(images.shape), 0), images)
    assert instrument.backproject(images).shape == (2, 4, 8, 8)
    assert instrument.backward.shape_input == forward.shape_output
    assert instrument.photons_per_radiance.shape == (4, 8, 8)
    assert instrument.weights is None


def test_mart_as_ctis(instrument):
    images = instrument.image(tiny_scene())
    result = spart.mart(instrument, images)
    # S2 of shared/reference/ctis-mart.md: 52580.4606 electrons per channel,
    # gamma 1 (= 2 / 2); the iteration counts of that digest are ctis 0.3.0's
    # on older weights (tests/parity/test_mart_parity.py holds spart to 0.3.1)
    assert np.allclose(images.sum(axis=(1, 2)), 52580.4606, rtol=1e-8)
    assert result.success and result.gamma == 1.0
    assert result.message == "Achieved merit less than 0.001."
    n = result.num_iteration
    assert result.mean_chi_squared.shape == (n, 2) and result.correlation_residual.shape == (n, 2)
    assert result.merit[0] > 1000 and result.merit[-2] - result.merit[-1] < 1e-3
    assert result.solution.shape == (4, 8, 8) and result.solutions.shape == (1, 4, 8, 8)
    inverter = spart.MartInverter(instrument, intermediate=True)
    kept = inverter(images)
    assert kept.solutions.shape == (n, 4, 8, 8)
    assert np.array_equal(kept.solution, result.solution)


def test_mart_stopping_rules_and_callback(instrument):
    images = instrument.image(tiny_scene())
    limited = spart.mart(instrument, images, num_iteration=2)
    assert not limited.success and limited.message == "Max number of iterations (2) exceeded."
    seen = []
    stopped = spart.mart(instrument, images, callback=lambda report: seen.append(report)
                         or report["iteration"] == 4)
    assert [r["iteration"] for r in seen] == [0, 1, 2, 3, 4]
    assert stopped.num_iteration == 5 and not stopped.success
    assert seen[0]["mean_chi_squared"].shape == (2,)

    def broken(report):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        spart.mart(instrument, images, callback=broken)
    counted = spart.mart(instrument, images, stop_rule="count", num_iteration=3)
    assert counted.success and counted.num_iteration == 3


def test_mart_over_two_regridders(instrument):
    images = instrument.image(tiny_scene())
    pair = (instrument.forward, instrument.backward)
    result = spart.mart(pair, images, num_channel=2, gain=1.0, read_noise=0.0)
    assert np.array_equal(result.solution.reshape(-1),
                          spart.mart(instrument, images).solution.reshape(-1))


def test_observe_is_seeded(instrument):
    scene = tiny_scene()
    a, b = instrument.observe(scene, seed=7), instrument.observe(scene, seed=7)
    assert np.array_equal(a, b) and not np.array_equal(a, instrument.observe(scene, seed=8))


def test_mart_frames_give_each_frame_alone(instrument):
    """Frames of different brightness stop at different iterations; each
    frame's result is mart's on that frame alone, bit for bit, whatever the
    batch."""
    scene = tiny_scene()
    images = np.stack([instrument.observe(scene * k, seed=k) for k in (1.0, 0.3, 3.0)])
    alone = [spart.mart(instrument, frame) for frame in images]
    for batch in (0, 2):
        results = spart.mart_frames(instrument, images, batch_frames=batch)
        assert len(results) == 3
        for got, want in zip(results, alone):
            assert got.num_iteration == want.num_iteration and got.message == want.message
            assert np.array_equal(got.solution, want.solution)
            assert np.array_equal(got.mean_chi_squared, want.mean_chi_squared)
    assert len({r.num_iteration for r in alone}) > 1  # they did stop apart
    with pytest.raises(spart.SpartValueError, match="images: shape"):
        spart.mart_frames(instrument, np.ascontiguousarray(images[:, 0]))


def test_mart_frames_in_a_kept_workspace(instrument):
    """mart_frames in a workspace the caller keeps between solves
    (spart_mart_solve_frames_workspace): the same bits as without it, the
    same workspace reused; one too small refused with spart's sentence."""
    scene = tiny_scene()
    images = np.stack([instrument.observe(scene * k, seed=k) for k in (1.0, 0.5)])
    bytes_needed = spart.mart_frames_workspace_size(instrument, 2, batch_frames=2)
    assert bytes_needed > 0
    workspace = np.empty(bytes_needed, dtype=np.uint8)
    few = dict(batch_frames=2, stop_rule="count", num_iteration=6)  # a few iterations suffice
    plain = spart.mart_frames(instrument, images, **few)
    for _ in range(2):
        kept = spart.mart_frames(instrument, images, workspace=workspace, **few)
        for got, want in zip(kept, plain):
            assert got.num_iteration == want.num_iteration
            assert np.array_equal(got.solution, want.solution)
            assert np.array_equal(got.mean_chi_squared, want.mean_chi_squared)
    with pytest.raises(spart.SpartValueError, match="workspace") as caught:
        spart.mart_frames(instrument, images, batch_frames=2, workspace=workspace[:64])
    assert caught.value.status_name == "SPART_ERROR_INVALID_ARGUMENT"
    with pytest.raises(TypeError, match="workspace: a bytearray"):
        spart.mart_frames(instrument, images, workspace=bytearray(bytes_needed))


def test_device_instrument_without_a_device():
    """IdealInstrument(device=0) without a CUDA build or device: spart's
    SPART_ERROR_NO_DEVICE (python/tests/test_gpu_build.py runs it on a GPU)."""
    try:
        spart.IdealInstrument(**tiny_instrument_parameters(), device=0)
    except spart.SpartError as error:
        assert error.status_name == "SPART_ERROR_NO_DEVICE"
