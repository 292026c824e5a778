"""
The ideal CTIS instrument (include/spart/instrument.h), as
``ctis.instruments.IdealInstrument``, with plain arrays in fixed units
instead of named arrays with astropy units; and the synthetic scene and
point-spread function of ctis's tutorials (include/spart/scene.h, psf.h).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from . import _arrays, _core
from ._core import ffi, lib
from ._regridder import Regridder
from ._weights import Weights

PSF_MODES = {"auto": lib.SPART_PSF_AUTO, "fft": lib.SPART_PSF_FFT,
             "folded": lib.SPART_PSF_FOLDED}


def _vector(values, name, function):
    """A 1-D float64 array (a copy of parameters, never of data)."""
    array = np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(-1))
    if array.size == 0:
        raise _core.argument_error(function, f"{name}: empty")
    return array


def _lines(lines, function):
    """(spart_instrument_line[], the edge arrays they point into)."""
    lines = list(lines)
    if not lines:
        raise _core.argument_error(function, "lines: empty; give at least one line")
    table = ffi.new("spart_instrument_line[]", len(lines))
    kept = []
    for k, line in enumerate(lines):
        if isinstance(line, tuple) and len(line) == 2:
            edges, scale = line
        else:
            edges, scale = line, 1.0
        edges = _vector(edges, f"lines[{k}] wavelength", function)
        kept.append(edges)
        table[k].num_wavelength = edges.size - 1
        table[k].wavelength = _core.pointer(edges)
        table[k].intensity_scale = float(scale)
    return table, kept


class IdealInstrument:
    """
    An ideal computed tomography imaging spectrograph, as
    ``ctis.instruments.IdealInstrument``: its forward operator (scene to
    images) and backprojection are spart Regridders.

    Channel ``c`` rotates the scene by ``angle[c]`` and disperses it along
    sensor x: a scene point ``(x, y)`` at wavelength ``w`` lands on
    ``X = (w - wavelength_ref) / dispersion + (cos a x - sin a y) / plate_scale
    + position_ref[0]``, ``Y = (sin a x + cos a y) / plate_scale + position_ref[1]``.

    Parameters
    ----------
    angle : array_like
        Dispersion angle of each channel, degree.
    dispersion : float
        Angstrom per pixel along sensor x.
    plate_scale : float
        Arcsec per pixel.
    wavelength_ref : float
        Angstrom: the wavelength that lands on ``position_ref``.
    position_ref : (float, float)
        Pixel where the scene's centre lands at ``wavelength_ref``.
    area_effective : float
        cm^2.
    timedelta_exposure : float
        Exposure time, s (ctis's name).
    wavelength : array_like or None
        Wavelength bin edges, Angstrom, increasing (None with ``lines``).
    scene_x, scene_y : array_like
        Scene cell vertices, arcsec.
    sensor_x, sensor_y : array_like
        Sensor pixel vertices, pixel.
    quantum_yield : float
        Electrons per photon (default 1).
    read_noise : float
        Electrons, standard deviation (default 0).
    solid_angle_steradian : bool
        True: scene radiance per steradian (as ``ctis.scenes``); False
        (default): per arcsec^2.
    dtype : {numpy.float64, numpy.float32}
        How both operators store their values.
    psf : numpy.ndarray, optional
        One kernel per channel, ``(channels, kx, ky)`` along sensor x then y,
        centre at ``n // 2``.
    psf_mode : {"auto", "fft", "folded"}
        Compose the PSF by FFT, or fold it into the weights (as ctis 0.5.0).
    keep_weights : bool
        Keep the geometric weights (the :attr:`weights` property).
    lines : sequence, optional
        Several spectral lines dispersed by the same geometry, instead of
        ``wavelength`` (then None): each line ``(wavelength_edges,
        intensity_scale)`` (or its edges alone, scale 1). The scene's
        wavelength axis is then the lines' bins one line after another
        (``include/spart/instrument.h`` says how each line's photons and
        backprojection are weighted). ``num_line`` says how many.
    memory_budget : int
        0 (default): build every weight, then the operators. > 0: assemble
        each operator by streaming within this many bytes, one (channel,
        bin) plane's weights at a time (the same operators, bit for bit; not
        with ``keep_weights`` or a folded PSF).
    device : int, optional
        Build on this CUDA device (spart built with CUDA): the weights,
        the transpose and both operators made there (no weight crosses the
        bus), the same CSR arrays bit for bit as the host build's. Its
        :meth:`image` and :meth:`backproject` then take and give arrays in
        that device's memory (CuPy, PyTorch, DLPack), and its
        :attr:`forward` and :attr:`backward` are GPU Regridders;
        :meth:`observe` and :func:`mart` need a host instrument.

    Notes
    -----
    Units are fixed (no unit library): scenes in erg / (A arcsec^2 cm^2 s)
    (or per sr), images in electrons. Layouts, C order: a scene is
    ``(wavelength, scene_x, scene_y)``, images ``(channel, sensor_x,
    sensor_y)``, backprojections ``(channel, wavelength, scene_x, scene_y)``.
    """

    def __init__(self, angle: npt.ArrayLike, dispersion: float, plate_scale: float,
                 wavelength_ref: float, position_ref: Sequence[float], area_effective: float,
                 timedelta_exposure: float, wavelength: Optional[npt.ArrayLike],
                 scene_x: npt.ArrayLike, scene_y: npt.ArrayLike, sensor_x: npt.ArrayLike,
                 sensor_y: npt.ArrayLike,
                 quantum_yield: float = 1.0, read_noise: float = 0.0,
                 solid_angle_steradian: bool = False, dtype: npt.DTypeLike = np.float64,
                 psf: Optional[np.ndarray] = None, psf_mode: str = "auto",
                 keep_weights: bool = False,
                 lines: Optional[Sequence[Any]] = None, memory_budget: int = 0,
                 device: Optional[int] = None) -> None:
        function = "IdealInstrument"
        arrays = {name: _vector(value, name, function) for name, value in (
            ("angle", angle), ("scene_x", scene_x), ("scene_y", scene_y),
            ("sensor_x", sensor_x), ("sensor_y", sensor_y))}
        kept_lines = None
        if lines is None:
            if wavelength is None:
                raise _core.argument_error(function, "wavelength: None; give the bin edges, "
                                           "or lines")
            arrays["wavelength"] = _vector(wavelength, "wavelength", function)
        elif wavelength is not None:
            raise _core.argument_error(function, "wavelength and lines both given; the lines "
                                       "give the bins (wavelength=None)")
        else:
            kept_lines = _lines(lines, function)
        params = ffi.new("spart_instrument_params *")
        lib.spart_instrument_params_init(params)
        params.num_channel = arrays["angle"].size
        params.angle = _core.pointer(arrays["angle"])
        params.dispersion = float(dispersion)
        params.plate_scale = float(plate_scale)
        params.wavelength_ref = float(wavelength_ref)
        position_ref = np.asarray(position_ref, dtype=np.float64).reshape(-1)
        if position_ref.size != 2:
            raise _core.argument_error(function, f"position_ref: {position_ref.size} numbers, "
                                       "not 2 (x, y)", "shape")
        params.position_ref[0:2] = [float(position_ref[0]), float(position_ref[1])]
        params.area_effective = float(area_effective)
        params.exposure_time = float(timedelta_exposure)
        params.quantum_yield = float(quantum_yield)
        params.read_noise = float(read_noise)
        for name in ("wavelength", "scene_x", "scene_y", "sensor_x", "sensor_y"):
            if name not in arrays:
                continue
            count = {"wavelength": "num_wavelength"}.get(name, "num_" + name)
            setattr(params, count, arrays[name].size - 1)
            setattr(params, name, _core.pointer(arrays[name]))
        if kept_lines is not None:
            params.num_line = len(kept_lines[1])
            params.lines = kept_lines[0]
        if int(memory_budget) < 0:
            raise _core.argument_error(function, f"memory_budget: {memory_budget}; give bytes "
                                       ">= 0 (0: build in memory)")
        params.memory_budget = int(memory_budget)
        params.solid_angle_steradian = 1 if solid_angle_steradian else 0
        dtype = np.dtype(dtype)
        if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise _core.argument_error(function, f"dtype: {dtype}; spart stores float64 or "
                                       "float32 values", "type")
        params.value_type = lib.SPART_FLOAT32 if dtype == np.float32 else lib.SPART_FLOAT64
        params.keep_weights = 1 if keep_weights else 0
        kept_psf = None
        if psf is not None:
            kept_psf = _core.values_in(psf, "psf", function)
            if kept_psf.ndim != 3 or kept_psf.shape[0] != arrays["angle"].size:
                raise _core.argument_error(function, f"psf: shape {kept_psf.shape}; the "
                                           f"instrument takes ({arrays['angle'].size}, kx, ky)",
                                           "shape")
            params.psf = _core.pointer(kept_psf)
            params.psf_size[0:2] = [kept_psf.shape[1], kept_psf.shape[2]]
            try:
                params.psf_mode = PSF_MODES[psf_mode]
            except KeyError:
                raise _core.argument_error(function, f"psf_mode: {psf_mode!r}; expected "
                                           "'auto', 'fft' or 'folded'") from None
        ctx = _core.context()
        if device is not None:
            _arrays.enter_device(ctx, device, None)  # built on the default stream
            params.on_device = 1
        self.device = None if device is None else int(device)
        out = ffi.new("spart_instrument **")
        ctx.check(lib.spart_instrument_create(ctx.pointer, params, out),
                  "spart_instrument_create")
        pointer = out[0]
        self._pointer = _core.owned(pointer, lib.spart_instrument_free, ctx)
        self.num_channel = int(lib.spart_instrument_num_channel(pointer))
        self.num_line = int(lib.spart_instrument_num_line(pointer))
        self.shape_scene = (int(lib.spart_instrument_num_wavelength(pointer)),
                            arrays["scene_x"].size - 1, arrays["scene_y"].size - 1)
        self.shape_images = (self.num_channel, arrays["sensor_x"].size - 1,
                             arrays["sensor_y"].size - 1)
        self.quantum_yield = float(quantum_yield)
        self.read_noise = float(read_noise)
        self._forward = None
        self._backward = None

    def __repr__(self):
        where = "" if self.device is None else f", on cuda:{self.device}"
        return (f"<spart.IdealInstrument: {self.num_channel} channels, scene "
                f"{self.shape_scene}, images {self.shape_images}{where}>")

    @property
    def forward(self) -> Regridder:
        """The forward operator, a Regridder from a scene to the images
        (electrons), photon conversion and quantum yield folded in. Its
        shapes keep the axes of its roles: it takes ``scene[None]``, shape
        ``(1, wavelength, scene_x, scene_y)`` (one scene shared by the
        channels), and gives ``(channel, 1, sensor_x, sensor_y)`` (the
        wavelengths summed); image() gives the images with those axes
        dropped and negative photons clamped."""
        if self._forward is None:
            pointer = lib.spart_instrument_forward(self._pointer)
            self._forward = Regridder(ffi.cast("spart_regridder *", pointer), None, owner=self)
        return self._forward

    @property
    def backward(self) -> Regridder:
        """The backprojection, a Regridder from images to one scene per
        channel, as ctis's backproject(integrate=True): it takes
        ``images[:, None]``, shape ``(channel, 1, sensor_x, sensor_y)``, and
        gives ``(channel, wavelength, scene_x, scene_y)``."""
        if self._backward is None:
            pointer = lib.spart_instrument_backward(self._pointer)
            self._backward = Regridder(ffi.cast("spart_regridder *", pointer), None, owner=self)
        return self._backward

    @property
    def weights(self) -> Optional[Weights]:
        """The geometric weights (conservative 2-D, orthogonal axes channel
        and wavelength), with ``keep_weights=True``; else None. A view of
        the instrument's own (not freed by the returned object)."""
        pointer = lib.spart_instrument_weights(self._pointer)
        if pointer == ffi.NULL:
            return None
        return Weights(ffi.cast("spart_weights *", pointer), None, owner=self)

    @property
    def photons_per_radiance(self) -> np.ndarray:
        """``A t dlambda dOmega / E`` per scene voxel, a read-only view."""
        pointer = lib.spart_instrument_photons_per_radiance(self._pointer)
        size = int(np.prod(self.shape_scene))
        return _core.view(self, pointer, size, "<f8").reshape(self.shape_scene)

    def _scene(self, scene, name, function):
        scene = _core.values_in(scene, name, function)
        if scene.shape != self.shape_scene:
            raise _core.argument_error(function, f"{name}: shape {scene.shape}; the "
                                       f"instrument's scenes are {self.shape_scene}", "shape")
        return scene

    def _images(self, images, name, function):
        images = _core.values_in(images, name, function)
        if images.shape != self.shape_images:
            raise _core.argument_error(function, f"{name}: shape {images.shape}; the "
                                       f"instrument's images are {self.shape_images}", "shape")
        return images

    def _on_device(self, array, name, function, shape):
        """(context, checked operand) of an array in this instrument's
        device memory, the context on that device and the array's stream."""
        operand = _arrays.operand(array, name, function, (np.float64,))
        if operand.device != self.device:
            raise _core.argument_error(function, f"{name}: in host memory, but the instrument "
                                       f"is on CUDA device {self.device}; give an array there "
                                       "(CuPy, PyTorch)", "type")
        if operand.shape != tuple(shape):
            raise _core.argument_error(function, f"{name}: shape {operand.shape}; the "
                                       f"instrument's take {tuple(shape)}", "shape")
        ctx = _core.context()
        _arrays.enter_device(ctx, self.device, operand.stream)
        return ctx, operand

    def image(self, scene: npt.ArrayLike, uncertainty: bool = False) -> Any:
        """
        The expected (noise-free) images of a scene, as ctis's
        ``image(scene, noise=False)``.

        Parameters
        ----------
        scene : numpy.ndarray
            float64, C-contiguous, ``(wavelength, scene_x, scene_y)``.
        uncertainty : bool
            Also return the width of the noise of each pixel.

        Returns
        -------
        numpy.ndarray or (numpy.ndarray, numpy.ndarray)
            The images ``(channel, sensor_x, sensor_y)`` in electrons, and
            with ``uncertainty`` their noise widths (arrays of the scene's
            library on a device instrument).
        """
        function = "IdealInstrument.image"
        if self.device is not None:
            ctx, operand = self._on_device(scene, "scene", function, self.shape_scene)
            images = _arrays.empty_like(scene, operand, self.shape_images, np.float64, function)
            widths = (_arrays.empty_like(scene, operand, self.shape_images, np.float64,
                                         function) if uncertainty else None)
            address = lambda a: _arrays.operand(a, "out", function, (np.float64,), True).address
            ctx.check(lib.spart_instrument_image(
                ctx.pointer, self._pointer, operand.pointer("const double *"),
                ffi.cast("double *", address(images)),
                ffi.cast("double *", address(widths)) if uncertainty else ffi.NULL),
                "spart_instrument_image")
            return (images, widths) if uncertainty else images
        scene = self._scene(scene, "scene", function)
        images = np.empty(self.shape_images)
        widths = np.empty(self.shape_images) if uncertainty else None
        ctx = _core.context()
        ctx.check(lib.spart_instrument_image(
            ctx.pointer, self._pointer, _core.pointer(scene), _core.pointer(images, True),
            _core.pointer(widths, True) if uncertainty else ffi.NULL), "spart_instrument_image")
        return (images, widths) if uncertainty else images

    def observe(self, scene: npt.ArrayLike, seed: int) -> np.ndarray:
        """
        Synthetic observations: Poisson photons of the expected images times
        the quantum yield, plus Gaussian read noise, from a seeded generator
        (the same images on every machine for a seed).

        Returns
        -------
        numpy.ndarray
            ``(channel, sensor_x, sensor_y)`` electrons.
        """
        function = "IdealInstrument.observe"
        scene = self._scene(scene, "scene", function)
        images = np.empty(self.shape_images)
        ctx = _core.context()
        ctx.check(lib.spart_instrument_observe(ctx.pointer, self._pointer, _core.pointer(scene),
                                               int(seed), _core.pointer(images, True), ffi.NULL),
                  "spart_instrument_observe")
        return images

    def backproject(self, images: npt.ArrayLike) -> Any:
        """
        Backproject images into one scene per channel, as ctis's
        ``backproject(images)``.

        Returns
        -------
        numpy.ndarray
            ``(channel, wavelength, scene_x, scene_y)``.
        """
        function = "IdealInstrument.backproject"
        if self.device is not None:
            ctx, operand = self._on_device(images, "images", function, self.shape_images)
            scenes = _arrays.empty_like(images, operand, (self.num_channel,) + self.shape_scene,
                                        np.float64, function)
            out = _arrays.operand(scenes, "out", function, (np.float64,), True)
            ctx.check(lib.spart_instrument_backproject(ctx.pointer, self._pointer,
                                                       operand.pointer("const double *"),
                                                       out.pointer("double *")),
                      "spart_instrument_backproject")
            return scenes
        images = self._images(images, "images", function)
        scenes = np.empty((self.num_channel,) + self.shape_scene)
        ctx = _core.context()
        ctx.check(lib.spart_instrument_backproject(ctx.pointer, self._pointer,
                                                   _core.pointer(images),
                                                   _core.pointer(scenes, True)),
                  "spart_instrument_backproject")
        return scenes


def wavelength_from_velocity(velocity: npt.ArrayLike, wavelength_rest: float) -> np.ndarray:
    """
    Wavelengths (A) of Doppler velocities (km/s) of a line at rest
    wavelength `wavelength_rest` (A), the optical convention, as astropy
    computes it: ``wavelength_rest * (1 + velocity / c)``.
    """
    function = "spart.wavelength_from_velocity"
    velocity = _vector(velocity, "velocity", function)
    result = np.empty(velocity.size)
    ctx = _core.context()
    ctx.check(lib.spart_wavelength_from_velocity(ctx.pointer, float(wavelength_rest),
                                                 velocity.size, _core.pointer(velocity),
                                                 _core.pointer(result, True)),
              "spart_wavelength_from_velocity")
    return result


def scene_gaussians(velocity: npt.ArrayLike, x: npt.ArrayLike, y: npt.ArrayLike,
                    wavelength_rest: float, width_velocity: float = 30.0, width_x: float = 1.0,
                    width_y: float = 1.0) -> Tuple[np.ndarray, np.ndarray]:
    """
    The eight Gaussian blobs of ``ctis.scenes.gaussians`` at the cell centres
    of a grid.

    Parameters
    ----------
    velocity : array_like
        Doppler velocity bin edges, km/s.
    x, y : array_like
        Cell vertices, arcsec.
    wavelength_rest : float
        Rest wavelength of the line, A.
    width_velocity, width_x, width_y : float
        The blobs' standard deviations (km/s, arcsec, arcsec).

    Returns
    -------
    scene : numpy.ndarray
        ``(wavelength, x, y)`` in erg / (A sr cm^2 s).
    wavelength : numpy.ndarray
        The wavelength bin edges (A) of the velocity edges.
    """
    function = "spart.scene_gaussians"
    velocity = _vector(velocity, "velocity", function)
    x = _vector(x, "x", function)
    y = _vector(y, "y", function)
    options = ffi.new("spart_scene_gaussians_options *")
    lib.spart_scene_gaussians_options_init(options)
    options.width_velocity = float(width_velocity)
    options.width_x = float(width_x)
    options.width_y = float(width_y)
    scene = np.empty((velocity.size - 1, x.size - 1, y.size - 1))
    wavelength = np.empty(velocity.size)
    ctx = _core.context()
    ctx.check(lib.spart_scene_gaussians(ctx.pointer, float(wavelength_rest), velocity.size - 1,
                                        _core.pointer(velocity), x.size - 1, _core.pointer(x),
                                        y.size - 1, _core.pointer(y), options,
                                        _core.pointer(wavelength, True),
                                        _core.pointer(scene, True)), "spart_scene_gaussians")
    return scene, wavelength


def psf_gaussian(sigma_major: float, sigma_minor: float, angle: float,
                 size: Sequence[int]) -> np.ndarray:
    """
    An elliptical Gaussian kernel normalised to sum 1, the PSF of ctis's PSF
    tutorial: ``sigma_major`` pixels along the direction at ``angle`` degrees
    from the first axis, ``sigma_minor`` across it, ``size = (n0, n1)``
    samples, centre at ``n // 2``.
    """
    function = "spart.psf_gaussian"
    dims = ffi.new("int64_t[2]", [int(size[0]), int(size[1])])
    kernel = np.empty((int(size[0]), int(size[1])))
    ctx = _core.context()
    ctx.check(lib.spart_psf_gaussian(ctx.pointer, float(sigma_major), float(sigma_minor),
                                     float(angle), dims, _core.pointer(kernel, True),
                                     kernel.size), function)
    return kernel
