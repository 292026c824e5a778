#!/usr/bin/env python3
"""
Reference cases of MART and the ideal instrument, made with ctis 0.3.1, for
spart's parity test (test_mart_parity.py) and benchmark (bench_mart.py).

The cases are those of shared/reference/ctis-mart.md, section 9, that the
parity test needs, regenerated with the pinned ctis (the figures in that
digest are of ctis 0.3.0 on an older regridding; see the notes per case):

    s2_tiny             2 channels (0 and 90 deg), 4 bins over +-200 km/s, 8 x 8
                        cells over +-10", 2.5"/pix, 32 x 16 sensor, 50 km/s/pix,
                        gamma 1 (= 2 / 2, the default)
    s3_tutorial         the simple-mart tutorial (docs/tutorials/simple-mart.ipynb):
                        4 channels at 5.64 deg + k 90 deg, 20 bins over +-500 km/s,
                        64 x 64 cells over +-10", 128 x 64 sensor, 10 km/s/pix,
                        0.4"/pix, 1 cm^2, 20 s; scene = gaussians + max / 100;
                        noise-free images; MartInverter(intermediate=True) as the
                        notebook calls it
    s4_noise            s3 with Poisson noise: photons per (channel, wavelength,
                        pixel) drawn with numpy.random.default_rng(42) in C order,
                        then summed over wavelength; intermediate True (on
                        convergence the last state is the solution either way),
                        so that the divergence can be followed per iteration
    s5_limit            s3 with num_iteration=2, threshold 1e-2, intermediate False
    s5_limit_intermediate   the same with intermediate True
    s8b_read_noise      s3's instrument with a read noise of 10 electrons,
                        noise-free images
    tutorial_256        s3's instrument with a 256 x 256 scene (same field and
                        sensor), noise-free

Each case is saved as <name>.npz holding, in spart's units (as
include/spart/instrument.h), plain float64 arrays:

    instrument   angle (deg, per channel), dispersion (A/pix), plate_scale
                 (arcsec/pix), wavelength_ref (A), position_ref (pix, x and y),
                 area_effective (cm^2), exposure_time (s), quantum_yield
                 (electron/photon), read_noise (electron), wavelength (bin edges,
                 A), scene_x, scene_y (cell vertices, arcsec), sensor_x, sensor_y
                 (pixel vertices, pix), velocity (bin edges, km/s),
                 wavelength_rest (A)
    scene        the true scene [wavelength][scene_x][scene_y] in
                 erg / (A sr cm^2 s) (ctis.scenes.gaussians + max / 100)
    photons_per_radiance   A t dlambda dOmega / E, photons per
                 erg / (A arcsec^2 cm^2 s), [wavelength][scene_x][scene_y]
    ctis_transpose_ratio_error   the largest relative error of the area
                 ratio in ctis's conservative transpose (exactly
                 dx dy / plate_scale^2 per pixel area for these rigid maps)
    forward_images, forward_widths   ctis's noise-free image of the scene and
                 its uncertainty (image(noise=False, uncertainty=True)),
                 electrons [channel][sensor_x][sensor_y]   (operator parity, S1)
    observed     the images MART is given, electrons [channel][sensor_x][sensor_y]
    backprojection   ctis's backproject(observed), erg / (A arcsec^2 cm^2 s),
                 [channel][wavelength][scene_x][scene_y]
    mart_*       the options (gamma, threshold, num_iteration, intermediate) and
                 ctis's result: num_iteration, success, message,
                 mean_chi_squared and correlation_residual [iteration][channel],
                 solution [wavelength][scene_x][scene_y] and, with intermediate,
                 solutions [iteration][...], all per arcsec^2 (guess=None: the
                 iterate has the unit of the backprojection), and guess (the
                 constant first state ctis computes)
    ctis_seconds_*   how long ctis took on this machine: weights (the
                 instrument's weights and transpose, shared by cases of one
                 instrument, counted where first built), image, backproject,
                 mart (whole call) and mart_per_iteration
    meta_*       the versions of ctis, regridding, numpy, astropy and the
                 SHA-256 of this file, so that a cache is rebuilt when either
                 changes

    ctis_cases.py --out DIR [--case NAME ...] [--force] [--list]

Importing this module costs nothing; ctis is imported when a case is built.
"""

import argparse
import hashlib
import os
import sys
import time
import warnings

import numpy as np

REFERENCE_VERSIONS = {"ctis": "0.3.1", "regridding": "3.6.0"}

# Units of the recorded arrays (as astropy spells them; spart's units).
UNIT_RADIANCE_SR = "erg / (Angstrom sr cm2 s)"
UNIT_RADIANCE_ARCSEC2 = "erg / (Angstrom arcsec2 cm2 s)"


def _tutorial(**changes):
    """The simple-mart tutorial's parameters, with `changes` applied."""
    spec = dict(
        angles=None,  # None: 5.64 deg + linspace(0, 360, 4, endpoint=False)
        num_wavelength=20,
        velocity_max=500.0,  # km/s: the bins span -max..max
        num_scene=64,
        field=10.0,  # arcsec: the scene spans -field..field
        sensor=(128, 64),
        dispersion_velocity=10.0,  # km/s per pixel
        plate_scale=0.4,
        position_ref=(64, 32),
        area=1.0,
        exposure=20.0,
        read_noise=0.0,
        noise_seed=None,  # an int: Poisson noise drawn with default_rng(seed)
        gamma=None,
        threshold=1e-3,
        num_iteration=100,
        intermediate=False,
    )
    spec.update(changes)
    return spec


CASES = {
    "s2_tiny": _tutorial(angles=[0.0, 90.0], num_wavelength=4, velocity_max=200.0, num_scene=8,
                         sensor=(32, 16), dispersion_velocity=50.0, plate_scale=2.5,
                         position_ref=(16, 8)),
    "s3_tutorial": _tutorial(intermediate=True),
    "s4_noise": _tutorial(noise_seed=42, intermediate=True),
    "s5_limit": _tutorial(num_iteration=2, threshold=1e-2),
    "s5_limit_intermediate": _tutorial(num_iteration=2, threshold=1e-2, intermediate=True),
    "s8b_read_noise": _tutorial(read_noise=10.0),
    "tutorial_256": _tutorial(num_scene=256),
}

# What an instrument (and its weights, which ctis caches on the object) depends on.
_INSTRUMENT_KEYS = ("angles", "num_wavelength", "velocity_max", "num_scene", "field", "sensor",
                    "dispersion_velocity", "plate_scale", "position_ref", "area", "exposure",
                    "read_noise")


def script_digest():
    """SHA-256 of this file: a cache made by another version is stale."""
    with open(os.path.abspath(__file__), "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def reference_problem():
    """None when ctis and regridding at the pinned versions import, else why not."""
    try:
        from importlib.metadata import version

        import astropy  # noqa: F401
        import ctis  # noqa: F401
        import named_arrays  # noqa: F401
    except ImportError as error:
        return f"cannot import the reference packages: {error}"
    for package, pinned in REFERENCE_VERSIONS.items():
        found = version(package)
        if found != pinned:
            return f"{package} {found} is installed, the parity tests pin {pinned}"
    return None


def _versions():
    from importlib.metadata import version

    return {name: version(name) for name in ("ctis", "regridding", "named-arrays", "numpy",
                                             "astropy", "numba")}


# ---- from named arrays to plain arrays ---------------------------------------------------


def _plain(array, axes, unit=None):
    """The values of a named (scalar) array as a float64 NumPy array with
    the given axes in this order (absent axes must have length 1 in the
    result: they are broadcast by named_arrays first)."""
    import astropy.units as u
    import named_arrays as na

    array = na.as_named_array(array)
    values = array.ndarray
    if isinstance(values, u.Quantity):
        values = values.to_value(unit) if unit is not None else values.value
    values = np.asarray(values, dtype=np.float64)
    have = tuple(array.axes)
    missing = [a for a in axes if a not in have]
    extra = [a for a in have if a not in axes]
    if extra:
        raise ValueError(f"axes {extra} of {have} are not among {axes}")
    values = values.reshape(values.shape + (1,) * len(missing))
    have = have + tuple(missing)
    return np.ascontiguousarray(np.transpose(values, [have.index(a) for a in axes]))


def _vertices(component, axis, unit):
    """The 1-D vertices of a grid component that varies along `axis` only."""
    import astropy.units as u
    import named_arrays as na

    component = na.as_named_array(component).explicit
    values = component.ndarray
    values = values.to_value(unit) if isinstance(values, u.Quantity) else np.asarray(values)
    values = np.asarray(values, dtype=np.float64)
    axes = tuple(component.axes)
    values = np.moveaxis(values, axes.index(axis), 0).reshape(values.shape[axes.index(axis)], -1)
    if not np.all(values == values[:, :1]):
        raise ValueError(f"grid component varies along more than {axis}")
    return np.ascontiguousarray(values[:, 0])


# ---- building the cases ------------------------------------------------------------------


def _build_instrument(spec):
    """ctis's IdealInstrument and true scene for a case, as the tutorial builds them."""
    import astropy.units as u
    import ctis
    import named_arrays as na

    velocity = na.linspace(-spec["velocity_max"], spec["velocity_max"], axis="wavelength",
                           num=spec["num_wavelength"] + 1) * u.km / u.s
    wavelength_rest = 171 * u.AA
    n = spec["num_scene"]
    position_scene = na.Cartesian2dVectorLinearSpace(
        start=-spec["field"] * u.arcsec,
        stop=spec["field"] * u.arcsec,
        axis=na.Cartesian2dVectorArray("scene_x", "scene_y"),
        num=na.Cartesian2dVectorArray(n + 1, n + 1),
    )
    mx, my = spec["sensor"]
    position_sensor = na.Cartesian2dVectorArray(
        x=na.arange(0, mx + 1, axis="sensor_x") * u.pix,
        y=na.arange(0, my + 1, axis="sensor_y") * u.pix,
    )
    coordinates_scene = na.DopplerPositionalVectorArray.from_velocity(
        velocity=velocity, wavelength_rest=wavelength_rest, position=position_scene)
    coordinates_sensor = na.DopplerPositionalVectorArray.from_velocity(
        velocity=velocity, wavelength_rest=wavelength_rest, position=position_sensor)
    scene = ctis.scenes.gaussians(coordinates_scene)
    scene = scene + scene.max() / 100
    if spec["angles"] is None:
        angle = na.linspace(0, 360, num=4, axis="channel", endpoint=False) * u.deg
        angle = angle + 5.64 * u.deg
    else:
        angle = na.ScalarArray(np.asarray(spec["angles"], dtype=np.float64), "channel") * u.deg
    dispersion = (spec["dispersion_velocity"] * u.km / u.s).to(
        u.AA, equivalencies=u.doppler_optical(wavelength_rest))
    dispersion = (dispersion - wavelength_rest) / u.pix
    instrument = ctis.instruments.IdealInstrument(
        area_effective=spec["area"] * u.cm**2,
        timedelta_exposure=spec["exposure"] * u.s,
        plate_scale=spec["plate_scale"] * u.arcsec / u.pix,
        dispersion=dispersion,
        angle=angle,
        wavelength_ref=wavelength_rest,
        position_ref=na.Cartesian2dVectorArray(*spec["position_ref"]) * u.pix,
        coordinates_scene=coordinates_scene,
        coordinates_sensor=coordinates_sensor,
        channel="channel",
        axis_channel="channel",
        axis_wavelength="wavelength",
        axis_scene_xy=("scene_x", "scene_y"),
        axis_sensor_xy=("sensor_x", "sensor_y"),
        read_noise=spec["read_noise"] * u.electron,
    )
    return instrument, scene, velocity


def _instrument_arrays(instrument, velocity):
    """Every parameter of the instrument as plain numbers in spart's units."""
    import astropy.units as u

    cs, ce = instrument.coordinates_scene, instrument.coordinates_sensor
    position_ref = instrument.position_ref
    return dict(
        angle=_plain(instrument.angle, ("channel",), u.deg),
        dispersion=np.float64(instrument.dispersion.to_value(u.AA / u.pix)),
        plate_scale=np.float64(instrument.plate_scale.to_value(u.arcsec / u.pix)),
        wavelength_ref=np.float64(instrument.wavelength_ref.to_value(u.AA)),
        position_ref=np.array([np.asarray(position_ref.x.to_value(u.pix)),
                               np.asarray(position_ref.y.to_value(u.pix))], dtype=np.float64),
        area_effective=np.float64(instrument.area_effective.to_value(u.cm**2)),
        exposure_time=np.float64(instrument.timedelta_exposure.to_value(u.s)),
        quantum_yield=np.float64(instrument.quantum_yield.to_value(u.electron / u.photon)),
        read_noise=np.float64(instrument.read_noise.to_value(u.electron)),
        wavelength=_vertices(cs.wavelength, "wavelength", u.AA),
        wavelength_rest=np.float64(171.0),
        velocity=_vertices(velocity, "wavelength", u.km / u.s),
        scene_x=_vertices(cs.position.x, "scene_x", u.arcsec),
        scene_y=_vertices(cs.position.y, "scene_y", u.arcsec),
        sensor_x=_vertices(ce.position.x, "sensor_x", u.pix),
        sensor_y=_vertices(ce.position.y, "sensor_y", u.pix),
    )


def _photons_per_radiance(instrument):
    """A t dlambda dOmega / E in photons per erg / (A arcsec^2 cm^2 s)."""
    import astropy.units as u

    s = instrument._volume_scene / instrument._energy_per_photon
    s = s * instrument.area_effective * instrument.timedelta_exposure
    unit = u.photon / u.Unit(UNIT_RADIANCE_ARCSEC2)
    s = _plain(s, ("wavelength", "scene_x", "scene_y"), unit)
    shape = instrument.coordinates_scene.shape
    cells = tuple(shape[a] - 1 for a in ("wavelength", "scene_x", "scene_y"))
    return np.ascontiguousarray(np.broadcast_to(s, cells))


def _transpose_ratio_error(instrument, arrays):
    """The largest relative error of ctis's conservative transpose factor.
    Each entry of weights_transpose is the forward entry times (mapped cell
    area) / (pixel area), exactly (dx dy / plate_scale^2) / (pixel area) for
    the ideal instrument's rigid maps of a uniform grid; regridding computes
    the areas by the shoelace formula at corners far from the origin, with
    a rounding error that no other implementation repeats. The parity test
    holds spart's backprojection to this, the reference's own error."""
    def uniform_step(vertices):
        steps = np.diff(vertices)
        if not np.allclose(steps, steps[0], rtol=1e-12, atol=0):
            raise ValueError("the exact transpose factor needs uniform grids")
        return abs(float(steps[0]))

    cell = uniform_step(arrays["scene_x"]) * uniform_step(arrays["scene_y"])
    pixel = uniform_step(arrays["sensor_x"]) * uniform_step(arrays["sensor_y"])
    exact = cell / float(arrays["plate_scale"]) ** 2 / pixel
    forward = instrument.weights[0].ndarray.reshape(-1)
    transpose = instrument.weights_transpose[0].ndarray.reshape(-1)
    worst = 0.0
    for (ii, io, v), (ii_t, io_t, v_t) in zip(forward, transpose):
        if not (np.array_equal(ii, io_t) and np.array_equal(io, ii_t)):
            raise ValueError("weights_transpose is not in the order of weights")
        v, v_t = np.asarray(v), np.asarray(v_t)
        where = v > 0
        if np.any(where):
            worst = max(worst, float(np.max(np.abs(v_t[where] / v[where] / exact - 1))))
    return np.float64(worst)


def _noisy_images(instrument, scene, seed):
    """Poisson photons per (channel, wavelength, pixel), seeded, summed over
    wavelength, in electrons; with the FunctionArray MART is given."""
    import astropy.units as u

    planes = instrument.image(scene, integrate=False, noise=False)
    axes = ("channel", "wavelength", "sensor_x", "sensor_y")
    electrons = _plain(planes.outputs, axes, u.electron)
    quantum_yield = float(instrument.quantum_yield.to_value(u.electron / u.photon))
    photons = electrons / quantum_yield
    counts = np.random.default_rng(seed).poisson(photons)
    observed = counts.sum(axis=1).astype(np.float64) * quantum_yield
    return observed


def _with_outputs(images, observed):
    """The FunctionArray `images` (of instrument.image) holding `observed` instead."""
    import astropy.units as u
    import named_arrays as na

    outputs = na.ScalarArray(observed, ("channel", "sensor_x", "sensor_y")) * u.electron
    return images.replace(outputs=outputs)


def _run_mart(instrument, images, spec):
    import astropy.units as u
    import ctis

    mart = ctis.inverters.MartInverter(
        instrument=instrument,
        gamma=spec["gamma"],
        threshold_convergence=spec["threshold"],
        num_iteration=spec["num_iteration"],
        intermediate=spec["intermediate"],
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the K limit warns, as designed
        result = mart(images)
    seconds = time.perf_counter() - start
    unit = u.Unit(UNIT_RADIANCE_ARCSEC2)
    scene_axes = ("wavelength", "scene_x", "scene_y")
    history_axes = ("iteration", "channel")
    record = dict(
        mart_gamma=np.float64(mart.gamma),
        mart_threshold=np.float64(spec["threshold"]),
        mart_max_iterations=np.int64(spec["num_iteration"]),
        mart_intermediate=np.bool_(spec["intermediate"]),
        mart_num_iteration=np.int64(result.num_iteration),
        mart_success=np.bool_(result.success),
        mart_message=np.str_(result.message),
        mart_mean_chi_squared=_plain(result.mean_chi_squared, history_axes),
        mart_correlation_residual=_plain(result.correlation_residual, history_axes),
        mart_solution=_plain(result.solution.outputs, scene_axes, unit),
        ctis_seconds_mart=np.float64(seconds),
        ctis_seconds_mart_per_iteration=np.float64(seconds / result.num_iteration),
    )
    if spec["intermediate"]:
        record["mart_solutions"] = _plain(result.solutions.outputs, ("iteration",) + scene_axes,
                                          unit)
    # The constant first state, as MartInverter computes it with guess=None.
    first = instrument.backproject(images).outputs.mean(instrument.axis_channel)
    record["mart_guess"] = np.float64(first.ndarray.mean().to_value(unit))
    return record


def build_case(name, instruments=None):
    """Run ctis for one case; returns the dict of arrays saved in <name>.npz.
    `instruments` (a dict) shares instruments, and the weights ctis caches
    on them, between cases of one process."""
    import astropy.units as u

    spec = CASES[name]
    key = tuple((k, repr(spec[k])) for k in _INSTRUMENT_KEYS)
    record = {}
    if instruments is not None and key in instruments:
        instrument, scene, velocity, seconds_weights = instruments[key]
    else:
        instrument, scene, velocity = _build_instrument(spec)
        start = time.perf_counter()
        instrument.weights
        instrument.weights_transpose
        seconds_weights = time.perf_counter() - start
        if instruments is not None:
            instruments[key] = (instrument, scene, velocity, seconds_weights)
        record["ctis_seconds_weights"] = np.float64(seconds_weights)
    record.setdefault("ctis_seconds_weights", np.float64(0.0))
    record["ctis_seconds_weights_instrument"] = np.float64(seconds_weights)
    record.update(_instrument_arrays(instrument, velocity))
    record["scene"] = _plain(scene.outputs, ("wavelength", "scene_x", "scene_y"),
                             u.Unit(UNIT_RADIANCE_SR))
    record["photons_per_radiance"] = _photons_per_radiance(instrument)
    record["ctis_transpose_ratio_error"] = _transpose_ratio_error(instrument, record)

    start = time.perf_counter()
    forward = instrument.image(scene, noise=False, uncertainty=True)
    record["ctis_seconds_image"] = np.float64(time.perf_counter() - start)
    image_axes = ("channel", "sensor_x", "sensor_y")
    record["forward_images"] = _plain(forward.outputs.nominal, image_axes, u.electron)
    record["forward_widths"] = _plain(forward.outputs.width, image_axes, u.electron)

    images = instrument.image(scene, noise=False)
    if spec["noise_seed"] is None:
        observed = record["forward_images"]
    else:
        observed = _noisy_images(instrument, scene, spec["noise_seed"])
        images = _with_outputs(images, observed)
    record["observed"] = np.ascontiguousarray(observed, dtype=np.float64)
    if not np.array_equal(_plain(images.outputs, image_axes, u.electron), record["observed"]):
        raise AssertionError(f"{name}: the images given to MART are not the recorded ones")

    start = time.perf_counter()
    back = instrument.backproject(images)
    record["ctis_seconds_backproject"] = np.float64(time.perf_counter() - start)
    record["backprojection"] = _plain(back.outputs,
                                      ("channel", "wavelength", "scene_x", "scene_y"),
                                      u.Unit(UNIT_RADIANCE_ARCSEC2))
    record.update(_run_mart(instrument, images, spec))
    record["meta_script_sha256"] = np.str_(script_digest())
    for package, found in _versions().items():
        record[f"meta_version_{package.replace('-', '_')}"] = np.str_(found)
    record["meta_case"] = np.str_(name)
    return record


# ---- the cache ----------------------------------------------------------------------------


def case_path(directory, name):
    return os.path.join(directory, f"{name}.npz")


def cached(directory, name):
    """The case's arrays from `directory` if they were made by this file
    with the installed reference versions, else None."""
    path = case_path(directory, name)
    if not os.path.exists(path):
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            record = {k: data[k] for k in data.files}
    except (OSError, ValueError):
        return None
    if str(record.get("meta_script_sha256", "")) != script_digest():
        return None
    versions = _versions()
    for package, found in versions.items():
        if str(record.get(f"meta_version_{package.replace('-', '_')}", "")) != found:
            return None
    return record


def save(directory, name, record):
    """Write atomically, so that a killed run never leaves half a file."""
    os.makedirs(directory, exist_ok=True)
    path = case_path(directory, name)
    temporary = f"{path}.{os.getpid()}.tmp.npz"
    np.savez(temporary, **record)
    os.replace(temporary, path)


def load_or_build(directory, names, force=False, log=print):
    """The records of `names`, from the cache where it is fresh, else built
    with ctis (one process, instruments shared) and saved."""
    records, instruments = {}, {}
    for name in names:
        record = None if force else cached(directory, name)
        if record is None:
            start = time.perf_counter()
            record = build_case(name, instruments)
            save(directory, name, record)
            log(f"ctis_cases: built {name} in {time.perf_counter() - start:.1f} s "
                f"(weights {float(record['ctis_seconds_weights']):.2f} s, mart "
                f"{float(record['ctis_seconds_mart']):.2f} s for "
                f"{int(record['mart_num_iteration'])} iterations)")
        records[name] = record
    return records


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=False, default=None, help="directory of the .npz files")
    parser.add_argument("--case", action="append", default=None, help="a case (repeatable)")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    if args.out is None:
        parser.error("--out DIR is required")
    reason = reference_problem()
    if reason is not None:
        print(f"ctis_cases: {reason}")
        return 1
    names = args.case or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown cases {unknown}; --list shows them")
    records = load_or_build(args.out, names, force=args.force)
    print(f"{'case':<24}{'iterations':>11}{'success':>9}{'weights s':>11}{'image s':>9}"
          f"{'back s':>8}{'mart s':>8}{'ms/iter':>9}")
    for name, r in records.items():
        print(f"{name:<24}{int(r['mart_num_iteration']):>11}{str(bool(r['mart_success'])):>9}"
              f"{float(r['ctis_seconds_weights_instrument']):>11.2f}"
              f"{float(r['ctis_seconds_image']):>9.2f}{float(r['ctis_seconds_backproject']):>8.2f}"
              f"{float(r['ctis_seconds_mart']):>8.2f}"
              f"{1e3 * float(r['ctis_seconds_mart_per_iteration']):>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
