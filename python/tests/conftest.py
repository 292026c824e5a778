"""
Shared set-up of the package's tests. SPART_LIBRARY (set by the CTest test
python_package) names the libspart.so the parity tests call through the
ctypes layer of tests/parity, as "the C API" the package must agree with.
"""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PARITY = os.path.join(HERE, "..", "..", "tests", "parity")


def grid_2d(n, angle=0.2, shift=0.0, scale=1.0):
    """An n x n curvilinear grid: [-scale, scale]^2 turned by `angle` and
    moved by `shift` along both axes, as (x, y) vertex arrays."""
    t = np.linspace(-1.0, 1.0, n) * scale
    u, v = np.meshgrid(t, t, indexing="ij")
    return (np.cos(angle) * u - np.sin(angle) * v + shift,
            np.sin(angle) * u + np.cos(angle) * v + shift)


@pytest.fixture(scope="session")
def c_api():
    """tests/parity/spart_ctypes.Spart on SPART_LIBRARY (skipped without it)."""
    path = os.environ.get("SPART_LIBRARY")
    if not path or not os.path.exists(os.path.join(PARITY, "spart_ctypes.py")):
        pytest.skip("set SPART_LIBRARY to a libspart.so to compare with the C API")
    sys.path.insert(0, PARITY)
    import spart_ctypes

    return spart_ctypes, spart_ctypes.Spart(path)


def tiny_instrument_parameters():
    """The S2 case of ctis's tests (shared/reference/ctis-mart.md section 9):
    2 channels, 4 bins over +-200 km/s, 8 x 8 cells over +-10 arcsec,
    2.5 arcsec/pix, a 32 x 16 sensor, 50 km/s/pix."""
    import spart

    rest = 171.0
    wavelength = spart.wavelength_from_velocity(np.linspace(-200.0, 200.0, 5), rest)
    dispersion = spart.wavelength_from_velocity([50.0], rest)[0] - rest
    return dict(angle=[0.0, 90.0], dispersion=dispersion, plate_scale=2.5, wavelength_ref=rest,
                position_ref=(16.0, 8.0), area_effective=1.0, timedelta_exposure=20.0,
                wavelength=wavelength, scene_x=np.linspace(-10.0, 10.0, 9),
                scene_y=np.linspace(-10.0, 10.0, 9), sensor_x=np.arange(33.0),
                sensor_y=np.arange(17.0), solid_angle_steradian=True)


def tiny_scene():
    import spart

    scene, _ = spart.scene_gaussians(np.linspace(-200.0, 200.0, 5), np.linspace(-10.0, 10.0, 9),
                                      np.linspace(-10.0, 10.0, 9), wavelength_rest=171.0)
    return scene + scene.max() / 100


def address(array):
    """The address of an array's first byte."""
    return array.__array_interface__["data"][0]
