"""
The ideal CTIS instrument, MART and the synthetic scenes of spart
(include/spart/instrument.h, mart.h, scene.h, psf.h) through ctypes, for the
parity tests: the part of the binding above the Regridder. spart_ctypes
re-exports every name here, so callers write spart_ctypes.Instrument(...).
"""
import ctypes

import numpy as np

from spart_ctypes import P, Regridder, VALUE_TYPES, Weights, _Arrays, c_double_p, spart_array

# ---- the ideal instrument, MART and the synthetic scene ---------------------------------
# (include/spart/instrument.h, mart.h, scene.h), added for test_mart_parity.py and
# bench_mart.py. Declared on first use, so libraries without these symbols still load.


class spart_instrument_line(ctypes.Structure):
    # mirrors include/spart/instrument.h
    _fields_ = [
        ("num_wavelength", ctypes.c_int64),
        ("wavelength", c_double_p),
        ("intensity_scale", ctypes.c_double),
    ]


class spart_instrument_params(ctypes.Structure):
    # mirrors include/spart/instrument.h field for field (value_type: an int enum)
    _fields_ = [
        ("num_channel", ctypes.c_int64),
        ("angle", c_double_p),
        ("dispersion", ctypes.c_double),
        ("plate_scale", ctypes.c_double),
        ("wavelength_ref", ctypes.c_double),
        ("position_ref", ctypes.c_double * 2),
        ("area_effective", ctypes.c_double),
        ("exposure_time", ctypes.c_double),
        ("quantum_yield", ctypes.c_double),
        ("read_noise", ctypes.c_double),
        ("num_wavelength", ctypes.c_int64),
        ("wavelength", c_double_p),
        ("num_scene_x", ctypes.c_int64),
        ("scene_x", c_double_p),
        ("num_scene_y", ctypes.c_int64),
        ("scene_y", c_double_p),
        ("num_sensor_x", ctypes.c_int64),
        ("sensor_x", c_double_p),
        ("num_sensor_y", ctypes.c_int64),
        ("sensor_y", c_double_p),
        ("solid_angle_steradian", ctypes.c_int),
        ("value_type", ctypes.c_int),
        ("keep_weights", ctypes.c_int),
        ("psf", c_double_p),
        ("psf_size", ctypes.c_int64 * 2),
        ("psf_mode", ctypes.c_int),
        ("num_line", ctypes.c_int64),
        ("lines", ctypes.POINTER(spart_instrument_line)),
        ("memory_budget", ctypes.c_size_t),
    ]


class spart_mart_regridder_pair(ctypes.Structure):
    _fields_ = [
        ("forward", ctypes.c_void_p),
        ("backward", ctypes.c_void_p),
        ("num_channel", ctypes.c_int64),
        ("gain", ctypes.c_double),
        ("read_noise", ctypes.c_double),
    ]


class spart_mart_operators(ctypes.Structure):
    # the two callbacks are only passed through from C to C here
    _fields_ = [
        ("num_channel", ctypes.c_int64),
        ("scene_size", ctypes.c_int64),
        ("image_size", ctypes.c_int64),
        ("forward", ctypes.c_void_p),
        ("backward", ctypes.c_void_p),
        ("user", ctypes.c_void_p),
        ("on_device", ctypes.c_int),
        ("capturable", ctypes.c_int),
        # the C library writes the whole struct (spart_instrument_mart_operators):
        # every field must be here, or it writes past the Python object
        ("forward_frames", ctypes.c_void_p),
        ("backward_frames", ctypes.c_void_p),
    ]


class spart_mart_progress(ctypes.Structure):
    _fields_ = [
        ("iteration", ctypes.c_int64),
        ("num_channel", ctypes.c_int64),
        ("mean_chi_squared", c_double_p),
        ("correlation", c_double_p),
        ("merit", ctypes.c_double),
        ("elapsed_seconds", ctypes.c_double),
        ("frame", ctypes.c_int64),
    ]


MART_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, P(spart_mart_progress))

MART_STOP_RULES = {"threshold": 0, "target": 1, "count": 2}
PSF_MODES = {"auto": 0, "fft": 1, "folded": 2}


class spart_mart_options(ctypes.Structure):
    _fields_ = [
        ("gamma", ctypes.c_double),
        ("stop_rule", ctypes.c_int),
        ("threshold", ctypes.c_double),
        ("target", ctypes.c_double),
        ("max_iterations", ctypes.c_int64),
        ("keep_intermediate", ctypes.c_int),
        ("guess", c_double_p),
        ("callback", MART_CALLBACK),
        ("callback_user", ctypes.c_void_p),
    ]


class spart_scene_gaussians_options(ctypes.Structure):
    _fields_ = [
        ("width_velocity", ctypes.c_double),
        ("width_x", ctypes.c_double),
        ("width_y", ctypes.c_double),
        ("drift", ctypes.c_double),
        ("frame", ctypes.c_int64),
    ]


def _declare_solvers(lib):
    """The C signatures of spart/instrument.h, spart/mart.h and spart/scene.h
    (once per library)."""
    if getattr(lib, "_spart_solvers_declared", False):
        return
    status = ctypes.c_int
    ctx = ctypes.c_void_p
    handle = ctypes.c_void_p
    table = {
        "spart_instrument_params_init": (None, [P(spart_instrument_params)]),
        "spart_instrument_create": (status, [ctx, P(spart_instrument_params), P(handle)]),
        "spart_instrument_free": (None, [handle]),
        "spart_instrument_num_channel": (ctypes.c_int64, [handle]),
        "spart_instrument_num_wavelength": (ctypes.c_int64, [handle]),
        "spart_instrument_num_line": (ctypes.c_int64, [handle]),
        "spart_instrument_scene_size": (ctypes.c_int64, [handle]),
        "spart_instrument_image_size": (ctypes.c_int64, [handle]),
        "spart_instrument_forward": (handle, [handle]),
        "spart_instrument_backward": (handle, [handle]),
        "spart_instrument_photons_per_radiance": (c_double_p, [handle]),
        "spart_instrument_image": (status, [ctx, handle, c_double_p, c_double_p, c_double_p]),
        "spart_instrument_backproject": (status, [ctx, handle, c_double_p, c_double_p]),
        "spart_instrument_observe": (
            status, [ctx, handle, c_double_p, ctypes.c_uint64, c_double_p, c_double_p]
        ),
        "spart_instrument_mart_operators": (
            status, [ctx, handle, P(spart_mart_regridder_pair), P(spart_mart_operators)]
        ),
        "spart_mart_options_init": (None, [P(spart_mart_options)]),
        "spart_mart_solve": (
            status,
            [ctx, P(spart_mart_operators), c_double_p, P(spart_mart_options), P(handle)],
        ),
        "spart_mart_result_free": (None, [handle]),
        "spart_mart_result_num_iterations": (ctypes.c_int64, [handle]),
        "spart_mart_result_success": (ctypes.c_int, [handle]),
        "spart_mart_result_message": (ctypes.c_char_p, [handle]),
        "spart_mart_result_gamma": (ctypes.c_double, [handle]),
        "spart_mart_result_num_channel": (ctypes.c_int64, [handle]),
        "spart_mart_result_scene_size": (ctypes.c_int64, [handle]),
        "spart_mart_result_solution": (c_double_p, [handle]),
        "spart_mart_result_num_solutions": (ctypes.c_int64, [handle]),
        "spart_mart_result_solutions": (c_double_p, [handle, ctypes.c_int64]),
        "spart_mart_result_mean_chi_squared": (c_double_p, [handle]),
        "spart_mart_result_correlation": (c_double_p, [handle]),
        "spart_scene_gaussians_options_init": (None, [P(spart_scene_gaussians_options)]),
        "spart_wavelength_from_velocity": (
            status, [ctx, ctypes.c_double, ctypes.c_int64, c_double_p, c_double_p]
        ),
        "spart_scene_gaussians": (
            status,
            [ctx, ctypes.c_double, ctypes.c_int64, c_double_p, ctypes.c_int64, c_double_p,
             ctypes.c_int64, c_double_p, P(spart_scene_gaussians_options), c_double_p,
             c_double_p],
        ),
    }
    for name, (restype, argtypes) in table.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    lib._spart_solvers_declared = True


def _double_pointer(array):
    return array.ctypes.data_as(c_double_p)


def _copy_doubles(pointer, count):
    if count == 0:
        return np.zeros(0)
    if not pointer:
        raise RuntimeError("spart returned NULL for a non-empty array")
    return np.ctypeslib.as_array(pointer, shape=(count,)).copy()


class Instrument:
    """
    A spart_instrument (include/spart/instrument.h) made in `spart`'s
    context from plain arrays in spart's units:

        inst = Instrument(spart, angle=..., dispersion=..., plate_scale=...,
                          wavelength_ref=..., position_ref=(x, y),
                          area_effective=..., exposure_time=..., wavelength=edges,
                          scene_x=..., scene_y=..., sensor_x=..., sensor_y=...,
                          quantum_yield=1, read_noise=0, solid_angle_steradian=False,
                          value_type="float64", psf=None, psf_mode="auto")
        images, widths = inst.image(scene)          # scene: (L, Nx, Ny)
        scenes = inst.backproject(images)           # images: (C, Mx, My)
        result = inst.mart(observed, gamma=..., threshold=..., max_iterations=...)

    psf: one kernel per channel, (C, kx, ky) along sensor x then y, centre
    at floor(n / 2) (include/spart/instrument.h); psf_mode "auto", "fft" or
    "folded".

    lines: several spectral lines instead of `wavelength` (give wavelength=None):
    a list of (bin edges in A, intensity scale); the scene's spectral axis is
    then the lines' bins one line after another.
    """

    def __init__(self, spart, angle, dispersion, plate_scale, wavelength_ref, position_ref,
                 area_effective, exposure_time, wavelength, scene_x, scene_y, sensor_x,
                 sensor_y, quantum_yield=1.0, read_noise=0.0, solid_angle_steradian=False,
                 value_type="float64", psf=None, psf_mode="auto", lines=None):
        _declare_solvers(spart.lib)
        line_edges = []
        if lines is not None:
            line_edges = [np.ascontiguousarray(edges, dtype=np.float64).reshape(-1)
                          for edges, _ in lines]
            wavelength = np.zeros(1)  # no one-line bins: num_wavelength 0, wavelength NULL
        self.spart = spart
        lib = spart.lib
        arrays = [np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
                  for a in (angle, wavelength, scene_x, scene_y, sensor_x, sensor_y)]
        self._arrays = arrays  # read by spart_instrument_create only; kept for clarity
        angle, wavelength, scene_x, scene_y, sensor_x, sensor_y = arrays
        params = spart_instrument_params()
        lib.spart_instrument_params_init(ctypes.byref(params))
        params.num_channel = angle.size
        params.angle = _double_pointer(angle)
        params.dispersion = float(dispersion)
        params.plate_scale = float(plate_scale)
        params.wavelength_ref = float(wavelength_ref)
        params.position_ref[0] = float(position_ref[0])
        params.position_ref[1] = float(position_ref[1])
        params.area_effective = float(area_effective)
        params.exposure_time = float(exposure_time)
        params.quantum_yield = float(quantum_yield)
        params.read_noise = float(read_noise)
        if lines is None:
            params.num_wavelength = wavelength.size - 1
            params.wavelength = _double_pointer(wavelength)
        else:
            self._lines = (spart_instrument_line * len(lines))()
            for k, (edges, (_, scale)) in enumerate(zip(line_edges, lines)):
                self._lines[k].num_wavelength = edges.size - 1
                self._lines[k].wavelength = _double_pointer(edges)
                self._lines[k].intensity_scale = float(scale)
            self._arrays.extend(line_edges)
            params.num_line = len(lines)
            params.lines = self._lines
        params.num_scene_x = scene_x.size - 1
        params.scene_x = _double_pointer(scene_x)
        params.num_scene_y = scene_y.size - 1
        params.scene_y = _double_pointer(scene_y)
        params.num_sensor_x = sensor_x.size - 1
        params.sensor_x = _double_pointer(sensor_x)
        params.num_sensor_y = sensor_y.size - 1
        params.sensor_y = _double_pointer(sensor_y)
        params.solid_angle_steradian = 1 if solid_angle_steradian else 0
        params.value_type = VALUE_TYPES.get(value_type, value_type)
        if psf is not None:
            psf = np.ascontiguousarray(psf, dtype=np.float64)
            if psf.ndim != 3 or psf.shape[0] != angle.size:
                raise ValueError(f"psf of shape {psf.shape}, the instrument takes "
                                 f"({angle.size}, kx, ky)")
            self._arrays.append(psf)
            params.psf = _double_pointer(psf)
            params.psf_size[0] = psf.shape[1]
            params.psf_size[1] = psf.shape[2]
            params.psf_mode = PSF_MODES.get(psf_mode, psf_mode)
        handle = ctypes.c_void_p()
        spart._check("spart_instrument_create",
                     lib.spart_instrument_create(spart.context, ctypes.byref(params),
                                                 ctypes.byref(handle)))
        self.handle = handle
        self.num_channel = int(lib.spart_instrument_num_channel(handle))
        bins = int(lib.spart_instrument_num_wavelength(handle))
        self.scene_shape = (bins, scene_x.size - 1, scene_y.size - 1)
        self.image_shape = (self.num_channel, sensor_x.size - 1, sensor_y.size - 1)
        self.scene_size = int(lib.spart_instrument_scene_size(handle))
        self.image_size = int(lib.spart_instrument_image_size(handle))

    def __del__(self):
        if getattr(self, "handle", None):
            self.spart.lib.spart_instrument_free(self.handle)
            self.handle = None

    def forward(self):
        """The forward Regridder (owned by the instrument; keeps it alive)."""
        handle = ctypes.c_void_p(self.spart.lib.spart_instrument_forward(self.handle))
        return Regridder(self.spart, handle, owner=self)

    def backward(self):
        handle = ctypes.c_void_p(self.spart.lib.spart_instrument_backward(self.handle))
        return Regridder(self.spart, handle, owner=self)

    def photons_per_radiance(self):
        return _copy_doubles(self.spart.lib.spart_instrument_photons_per_radiance(self.handle),
                             self.scene_size).reshape(self.scene_shape)

    def image(self, scene):
        """(images, widths) of a scene, each (C, Mx, My) electrons."""
        scene = np.ascontiguousarray(scene, dtype=np.float64)
        if scene.size != self.scene_size:
            raise ValueError(f"scene of {scene.size} values, the instrument takes "
                             f"{self.scene_size}")
        images = np.empty(self.image_shape)
        widths = np.empty(self.image_shape)
        self.spart._check("spart_instrument_image",
                          self.spart.lib.spart_instrument_image(
                              self.spart.context, self.handle, _double_pointer(scene),
                              _double_pointer(images), _double_pointer(widths)))
        return images, widths

    def backproject(self, images):
        """One scene per channel, (C, L, Nx, Ny)."""
        images = np.ascontiguousarray(images, dtype=np.float64)
        if images.size != self.num_channel * self.image_size:
            raise ValueError(f"images of {images.size} values, the instrument gives "
                             f"{self.num_channel * self.image_size}")
        scenes = np.empty((self.num_channel,) + self.scene_shape)
        self.spart._check("spart_instrument_backproject",
                          self.spart.lib.spart_instrument_backproject(
                              self.spart.context, self.handle, _double_pointer(images),
                              _double_pointer(scenes)))
        return scenes

    def observe(self, scene, seed):
        scene = np.ascontiguousarray(scene, dtype=np.float64)
        images = np.empty(self.image_shape)
        widths = np.empty(self.image_shape)
        self.spart._check("spart_instrument_observe",
                          self.spart.lib.spart_instrument_observe(
                              self.spart.context, self.handle, _double_pointer(scene),
                              int(seed), _double_pointer(images), _double_pointer(widths)))
        return images, widths

    def mart_operators(self):
        """(operators, pair): the MART operators of this instrument and the
        storage they point into (keep both, and the instrument, alive)."""
        pair = spart_mart_regridder_pair()
        operators = spart_mart_operators()
        self.spart._check("spart_instrument_mart_operators",
                          self.spart.lib.spart_instrument_mart_operators(
                              self.spart.context, self.handle, ctypes.byref(pair),
                              ctypes.byref(operators)))
        return operators, pair

    def mart(self, observed, **options):
        """spart_mart_solve on this instrument's operators; see mart_solve."""
        operators, pair = self.mart_operators()
        return mart_solve(self.spart, operators, observed, keep=(pair, self), **options)


class MartResult:
    """A spart_mart_result copied into NumPy arrays (the C result is freed)."""

    def __init__(self, lib, handle, scene_shape):
        self.num_iteration = int(lib.spart_mart_result_num_iterations(handle))
        self.success = bool(lib.spart_mart_result_success(handle))
        self.message = lib.spart_mart_result_message(handle).decode()
        self.gamma = float(lib.spart_mart_result_gamma(handle))
        self.num_channel = int(lib.spart_mart_result_num_channel(handle))
        scene_size = int(lib.spart_mart_result_scene_size(handle))
        shape = tuple(scene_shape) if scene_shape is not None else (scene_size,)
        n, c = self.num_iteration, self.num_channel
        self.mean_chi_squared = _copy_doubles(
            lib.spart_mart_result_mean_chi_squared(handle), n * c).reshape(n, c)
        self.correlation_residual = _copy_doubles(
            lib.spart_mart_result_correlation(handle), n * c).reshape(n, c)
        self.solution = _copy_doubles(lib.spart_mart_result_solution(handle),
                                      scene_size).reshape(shape)
        count = int(lib.spart_mart_result_num_solutions(handle))
        self.solutions = np.stack([
            _copy_doubles(lib.spart_mart_result_solutions(handle, k), scene_size).reshape(shape)
            for k in range(count)])
        self.progress = []  # (iteration, merit, elapsed_seconds) when a callback recorded them


def mart_solve(spart, operators, observed, gamma=None, threshold=1e-3, target=None,
               max_iterations=100, stop_rule="threshold", keep_intermediate=False, guess=None,
               record_progress=False, scene_shape=None, keep=()):
    """
    spart_mart_solve with ctis's names and defaults (gamma None: 2 / C).
    record_progress=True passes a callback that records (iteration, merit,
    elapsed seconds) per iteration into result.progress. Returns a
    MartResult.
    """
    _declare_solvers(spart.lib)
    lib = spart.lib
    observed = np.ascontiguousarray(observed, dtype=np.float64)
    options = spart_mart_options()
    lib.spart_mart_options_init(ctypes.byref(options))
    if gamma is not None:
        options.gamma = float(gamma)
    options.stop_rule = MART_STOP_RULES[stop_rule]
    options.threshold = float(threshold)
    if target is not None:
        options.target = float(target)
    options.max_iterations = int(max_iterations)
    options.keep_intermediate = 1 if keep_intermediate else 0
    if guess is not None:
        guess = np.ascontiguousarray(guess, dtype=np.float64)
        options.guess = _double_pointer(guess)
    progress = []
    if record_progress:
        def on_progress(user, report):
            r = report.contents
            progress.append((int(r.iteration), float(r.merit), float(r.elapsed_seconds)))
            return 0

        callback = MART_CALLBACK(on_progress)
        options.callback = callback
    handle = ctypes.c_void_p()
    spart._check("spart_mart_solve",
                 lib.spart_mart_solve(spart.context, ctypes.byref(operators),
                                      _double_pointer(observed), ctypes.byref(options),
                                      ctypes.byref(handle)))
    try:
        result = MartResult(lib, handle, scene_shape)
    finally:
        lib.spart_mart_result_free(handle)
    result.progress = progress
    return result


def scene_gaussians(spart, wavelength_rest, velocity, x, y, width_velocity=None, width_x=None,
                    width_y=None):
    """spart_scene_gaussians: (scene (L, Nx, Ny) per steradian, wavelength edges)."""
    _declare_solvers(spart.lib)
    lib = spart.lib
    velocity, x, y = (np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
                      for a in (velocity, x, y))
    options = spart_scene_gaussians_options()
    lib.spart_scene_gaussians_options_init(ctypes.byref(options))
    for name, value in (("width_velocity", width_velocity), ("width_x", width_x),
                        ("width_y", width_y)):
        if value is not None:
            setattr(options, name, float(value))
    scene = np.empty((velocity.size - 1, x.size - 1, y.size - 1))
    wavelength = np.empty(velocity.size)
    spart._check("spart_scene_gaussians",
                 lib.spart_scene_gaussians(spart.context, float(wavelength_rest),
                                           velocity.size - 1, _double_pointer(velocity),
                                           x.size - 1, _double_pointer(x), y.size - 1,
                                           _double_pointer(y), ctypes.byref(options),
                                           _double_pointer(wavelength), _double_pointer(scene)))
    return scene, wavelength


def convolve_weights(spart, weights, kernel):
    """spart_weights_convolve (as regridding.convolve_weights): a new Weights."""
    lib = spart.lib
    function = lib.spart_weights_convolve
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, P(spart_array),
                         P(ctypes.c_void_p)]
    keep = _Arrays()
    block = keep.array(kernel)
    handle = ctypes.c_void_p()
    spart._check("spart_weights_convolve",
                 function(spart.context, weights.handle, ctypes.byref(block),
                          ctypes.byref(handle)))
    return Weights(spart, handle)


def psf_gaussian(spart, sigma_major, sigma_minor, angle, size):
    """spart_psf_gaussian: the normalised elliptical Gaussian, size (n0, n1)."""
    function = spart.lib.spart_psf_gaussian
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_double,
                         P(ctypes.c_int64), c_double_p, ctypes.c_int64]
    dims = (ctypes.c_int64 * 2)(int(size[0]), int(size[1]))
    kernel = np.empty((int(size[0]), int(size[1])))
    spart._check("spart_psf_gaussian",
                 function(spart.context, float(sigma_major), float(sigma_minor), float(angle),
                          dims, _double_pointer(kernel), kernel.size))
    return kernel
