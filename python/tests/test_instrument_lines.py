"""
The instrument's several spectral lines (params.lines) and its build within
a memory budget (params.memory_budget), through the package: one line given
as `lines` with scale 1 is the one-line instrument bit for bit; two lines
are the sum of two one-line instruments of scaled area (to rounding, as
include/spart/instrument.h states); a budget gives the in-memory operators
bit for bit.
"""

import numpy as np
import pytest
from conftest import tiny_instrument_parameters, tiny_scene

import spart


def same_operator(a, b):
    return all(np.array_equal(p, q) for p, q in zip(a.csr(), b.csr()))


def test_one_line_is_the_instrument():
    params = tiny_instrument_parameters()
    plain = spart.IdealInstrument(**params)
    edges = params.pop("wavelength")
    lined = spart.IdealInstrument(**params, wavelength=None, lines=[(edges, 1.0)])
    assert lined.num_line == 1 and plain.num_line == 1
    assert lined.shape_scene == plain.shape_scene
    assert same_operator(lined.forward, plain.forward)
    assert same_operator(lined.backward, plain.backward)
    scene = tiny_scene()
    assert np.array_equal(lined.image(scene), plain.image(scene))


def test_two_lines_are_two_instruments():
    params = tiny_instrument_parameters()
    edges = params.pop("wavelength")
    other = spart.wavelength_from_velocity(np.linspace(-150.0, 150.0, 4), 171.3)
    two = spart.IdealInstrument(**params, wavelength=None, lines=[(edges, 1.0), (other, 0.5)])
    assert two.num_line == 2 and two.shape_scene == (4 + 3, 8, 8)
    scene = tiny_scene()
    second = np.ascontiguousarray(scene[:3] * 0.7)
    both = np.concatenate([scene, second])
    area = params.pop("area_effective")
    one = spart.IdealInstrument(**params, area_effective=area, wavelength=edges)
    half = spart.IdealInstrument(**params, area_effective=0.5 * area, wavelength=other)
    expected = (one.forward(scene[None]) + half.forward(second[None])).reshape(two.shape_images)
    assert np.allclose(two.forward(both[None]).reshape(two.shape_images), expected,
                       rtol=1e-12, atol=1e-9)
    with pytest.raises(ValueError, match="wavelength and lines"):
        spart.IdealInstrument(**params, area_effective=area, wavelength=edges, lines=[edges])
    with pytest.raises(ValueError, match="intensity|scale"):
        spart.IdealInstrument(**params, area_effective=area, wavelength=None,
                              lines=[(edges, -1.0)])


def test_memory_budget_same_operators():
    params = tiny_instrument_parameters()
    plain = spart.IdealInstrument(**params)
    budgeted = spart.IdealInstrument(**params, memory_budget=64 << 20)
    assert same_operator(budgeted.forward, plain.forward)
    assert same_operator(budgeted.backward, plain.backward)
    with pytest.raises(spart.SpartValueError, match="bytes|budget"):
        spart.IdealInstrument(**params, memory_budget=1000)
    with pytest.raises(ValueError, match="memory_budget"):
        spart.IdealInstrument(**params, memory_budget=-1)
