"""
MART (include/spart/mart.h), as ``ctis.inverters.MartInverter`` runs it: the
function mart(), the class MartInverter with ctis's constructor, and the
result with ctis's field names.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._core import ffi, lib
from ._instrument import IdealInstrument
from ._regridder import Regridder

STOP_RULES = {"threshold": lib.SPART_MART_STOP_THRESHOLD, "target": lib.SPART_MART_STOP_TARGET,
              "count": lib.SPART_MART_STOP_COUNT}


class MartResult:
    """
    What a MART run gives, with the names of ctis's IterativeInversionResult.

    Attributes
    ----------
    solution : numpy.ndarray
        The recovered scene ``(wavelength, scene_x, scene_y)``.
    solutions : numpy.ndarray
        The kept states, ``(k, wavelength, scene_x, scene_y)``: with
        ``intermediate`` the state at the start of every iteration, else
        the solution alone.
    mean_chi_squared : numpy.ndarray
        ``(num_iteration, channel)``: the mean chi^2 of the state at the
        start of each iteration, per channel.
    correlation_residual : numpy.ndarray
        ``(num_iteration, channel)``: Pearson's r of the prediction and the
        residual.
    merit : numpy.ndarray
        ``(num_iteration,)``: the mean over channels of mean_chi_squared.
    num_iteration : int
        The iterations done.
    success : bool
        Whether the run met its stopping rule.
    message : str
        Why it stopped, as ctis words it.
    gamma : float
        The exponent it used.
    """

    def __init__(self, pointer, shape_scene):
        n = int(lib.spart_mart_result_num_iterations(pointer))
        c = int(lib.spart_mart_result_num_channel(pointer))
        size = int(lib.spart_mart_result_scene_size(pointer))
        shape = tuple(shape_scene) if shape_scene is not None else (size,)

        def copy(c_pointer, count):
            if count == 0:
                return np.zeros(0)
            return np.frombuffer(ffi.buffer(c_pointer, 8 * count), dtype=np.float64).copy()

        self.num_iteration = n
        self.success = bool(lib.spart_mart_result_success(pointer))
        self.message = ffi.string(lib.spart_mart_result_message(pointer)).decode()
        self.gamma = float(lib.spart_mart_result_gamma(pointer))
        self.mean_chi_squared = copy(lib.spart_mart_result_mean_chi_squared(pointer),
                                     n * c).reshape(n, c)
        self.correlation_residual = copy(lib.spart_mart_result_correlation(pointer),
                                         n * c).reshape(n, c)
        self.merit = self.mean_chi_squared.mean(axis=1)
        self.solution = copy(lib.spart_mart_result_solution(pointer), size).reshape(shape)
        count = int(lib.spart_mart_result_num_solutions(pointer))
        self.solutions = np.stack([copy(lib.spart_mart_result_solutions(pointer, k),
                                        size).reshape(shape) for k in range(count)])

    @property
    def iteration(self) -> np.ndarray:
        """``arange(num_iteration)``, as ctis."""
        return np.arange(self.num_iteration)

    def __repr__(self):
        return (f"<spart.MartResult: {self.num_iteration} iterations, success "
                f"{self.success}, merit {self.merit[-1] if self.num_iteration else None}: "
                f"{self.message!r}>")


_progress_callbacks = {}


@ffi.def_extern()
def spart_python_mart_progress(user, progress):
    """spart's MART callback: hands the progress to the Python callable the
    run registered under `user`; a True return stops the run."""
    callback = _progress_callbacks[int(ffi.cast("uintptr_t", user))]
    n = int(progress.num_channel)
    report = dict(iteration=int(progress.iteration), merit=float(progress.merit),
                  elapsed_seconds=float(progress.elapsed_seconds),
                  mean_chi_squared=np.frombuffer(ffi.buffer(progress.mean_chi_squared, 8 * n),
                                                 dtype=np.float64).copy(),
                  correlation=np.frombuffer(ffi.buffer(progress.correlation, 8 * n),
                                            dtype=np.float64).copy())
    try:
        return 1 if callback(report) else 0
    except Exception:  # an exception cannot cross C: stop the run, re-raised after
        _progress_callbacks[("error", int(ffi.cast("uintptr_t", user)))] = \
            __import__("sys").exc_info()[1]
        return 1


def mart(instrument: Union[IdealInstrument, Tuple[Regridder, Regridder]],
         images: npt.ArrayLike, guess: Optional[npt.ArrayLike] = None,
         gamma: Optional[float] = None, threshold_convergence: float = 1e-3,
         num_iteration: int = 100, intermediate: bool = False, stop_rule: str = "threshold",
         target: float = 1.0, callback: Optional[Callable[[dict], Any]] = None,
         num_channel: Optional[int] = None, gain: Optional[float] = None,
         read_noise: Optional[float] = None) -> "MartResult":
    """
    Recover a scene from images with MART, as ``ctis.inverters.MartInverter``.

    Parameters
    ----------
    instrument : IdealInstrument or (Regridder, Regridder)
        The instrument, or its forward and backward operators: a forward
        Regridder from scenes to ``num_channel`` images and a backward one
        from images to one scene per channel (then give ``num_channel``,
        ``gain`` (electrons per photon) and ``read_noise``).
    images : numpy.ndarray
        The observations, float64, C-contiguous, ``(channel, sensor_x,
        sensor_y)`` electrons (any shape of the right size with operators).
    guess : numpy.ndarray, optional
        The first state, a scene (None: ctis's flat guess).
    gamma : float, optional
        The exponent (None: ``2 / channels``, as ctis).
    threshold_convergence : float
        Stop (a success) when the merit falls by less than this (ctis's rule).
    num_iteration : int
        The most iterations (ctis's name); with ``stop_rule="count"`` exactly this many.
    intermediate : bool
        Keep the state at the start of every iteration (``result.solutions``).
    stop_rule : {"threshold", "target", "count"}
        ``"target"``: stop when the merit is at or under `target`.
    target : float
        The merit of ``stop_rule="target"``.
    callback : callable, optional
        Called after each iteration's merit with a dict (iteration, merit,
        mean_chi_squared, correlation, elapsed_seconds); a true return
        stops the run.

    Returns
    -------
    MartResult
    """
    function = "spart.mart"
    ctx, pair, operators, shape_scene, images = _problem(
        instrument, images, function, num_channel, gain, read_noise, frames=False)
    options, kept = _options(operators, shape_scene, function, guess, gamma,
                             threshold_convergence, num_iteration, intermediate, stop_rule,
                             target, num_frames=1)
    key = None
    if callback is not None:
        key = id(callback)
        _progress_callbacks[key] = callback
        options.callback = lib.spart_python_mart_progress
        options.callback_user = ffi.cast("void *", key)
    out = ffi.new("spart_mart_result **")
    try:
        status = lib.spart_mart_solve(ctx.pointer, operators, _core.pointer(images), options,
                                      out)
    finally:
        if key is not None:
            _progress_callbacks.pop(key, None)
    raised = _progress_callbacks.pop(("error", key), None) if key is not None else None
    if status == lib.SPART_OK:
        try:
            result = MartResult(out[0], shape_scene)
        finally:
            lib.spart_mart_result_free(out[0])
    if raised is not None:
        raise raised
    ctx.check(status, "spart_mart_solve")
    return result


def _problem(instrument, images, function, num_channel, gain, read_noise, frames):
    """(context, pair, operators, scene shape, checked images) of a MART
    problem; with `frames`, images has a leading axis of frames."""
    ctx, pair, operators, shape_scene = _operators(instrument, function, num_channel, gain,
                                                   read_noise)
    images = _core.values_in(images, "images", function)
    if isinstance(instrument, IdealInstrument):
        shape = images.shape[1:] if frames else images.shape
        if shape != instrument.shape_images or (frames and images.ndim < 1):
            want = ("(frames,) + " if frames else "") + str(instrument.shape_images)
            raise _core.argument_error(function, f"images: shape {images.shape}; the "
                                       f"instrument's images are {want}", "shape")
    else:
        expected = operators.num_channel * operators.image_size
        size = images[0].size if frames and images.ndim >= 1 and len(images) else images.size
        if size != expected:
            raise _core.argument_error(function, f"images: {size} values a frame; the "
                                       f"operators take {expected}", "shape")
    return ctx, pair, operators, shape_scene, images


def _operators(instrument, function, num_channel, gain, read_noise):
    """(context, pair, operators, scene shape) of an instrument or a pair of
    Regridders (the pair struct must outlive the operators)."""
    pair = ffi.new("spart_mart_regridder_pair *")
    operators = ffi.new("spart_mart_operators *")
    ctx = _core.context()
    if isinstance(instrument, IdealInstrument):
        if instrument.device is not None:
            raise _core.argument_error(function, "instrument: on CUDA device "
                                       f"{instrument.device}; MART from Python runs on host "
                                       "instruments (build one without device=)")
        shape_scene = instrument.shape_scene
        ctx.check(lib.spart_instrument_mart_operators(ctx.pointer, instrument._pointer, pair,
                                                      operators),
                  "spart_instrument_mart_operators")
    elif (isinstance(instrument, tuple) and len(instrument) == 2
          and all(isinstance(r, Regridder) for r in instrument)):
        forward, backward = instrument
        if forward.device is not None or backward.device is not None:
            raise _core.argument_error(function, "instrument: Regridders on a GPU; MART from "
                                       "Python runs on host operators (.to_host())")
        if num_channel is None or gain is None:
            raise _core.argument_error(function, "give num_channel and gain (and read_noise) "
                                       "with a pair of Regridders")
        shape_scene = forward.shape_input
        pair.forward = forward._live()
        pair.backward = backward._live()
        pair.num_channel = int(num_channel)
        pair.gain = float(gain)
        pair.read_noise = float(read_noise or 0.0)
        ctx.check(lib.spart_mart_operators_from_regridders(ctx.pointer, pair, operators),
                  "spart_mart_operators_from_regridders")
    else:
        raise _core.argument_error(function, f"instrument: a {type(instrument).__name__}; "
                                   "give an IdealInstrument or (forward, backward) Regridders",
                                   "type")
    return ctx, pair, operators, shape_scene


def _options(operators, shape_scene, function, guess, gamma, threshold_convergence,
             num_iteration, intermediate, stop_rule, target, num_frames):
    """spart_mart_options of the arguments, and the arrays they point into."""
    options = ffi.new("spart_mart_options *")
    lib.spart_mart_options_init(options)
    if gamma is not None:
        options.gamma = float(gamma)
    try:
        options.stop_rule = STOP_RULES[stop_rule]
    except KeyError:
        raise _core.argument_error(function, f"stop_rule: {stop_rule!r}; expected "
                                   "'threshold', 'target' or 'count'") from None
    options.threshold = float(threshold_convergence)
    options.target = float(target)
    options.max_iterations = int(num_iteration)
    options.keep_intermediate = 1 if intermediate else 0
    if guess is not None:
        guess = _core.values_in(guess, "guess", function)
        if guess.size != num_frames * operators.scene_size:
            frames = f"({num_frames},) + " if num_frames > 1 else ""
            raise _core.argument_error(function, f"guess: shape {guess.shape}; the scenes "
                                       f"are {frames}{tuple(shape_scene)}", "shape")
        options.guess = _core.pointer(guess)
    return options, guess


def mart_frames(instrument: Union[IdealInstrument, Tuple[Regridder, Regridder]],
                images: npt.ArrayLike, guess: Optional[npt.ArrayLike] = None,
                gamma: Optional[float] = None, threshold_convergence: float = 1e-3,
                num_iteration: int = 100, intermediate: bool = False,
                stop_rule: str = "threshold", target: float = 1.0, batch_frames: int = 0,
                num_channel: Optional[int] = None, gain: Optional[float] = None,
                read_noise: Optional[float] = None,
                workspace: Optional[np.ndarray] = None) -> "list[MartResult]":
    """
    MART on a sequence of frames of the same instrument in one solve
    (spart_mart_solve_frames): each iteration applies the operators once to
    a whole batch of frames, and each frame keeps its own merits, stopping
    rule and solution, the same bits as :func:`mart` on that frame alone.

    Parameters
    ----------
    images : numpy.ndarray
        ``(frames,) + `` the images of one frame (float64, C-contiguous).
    guess : numpy.ndarray, optional
        ``(frames,) + `` the scene: each frame's first state.
    batch_frames : int
        Frames a pass of the operators (0: as many as fit 1 GiB, at most 64).
    workspace : numpy.ndarray, optional
        Working memory kept by the caller for a sequence of solves of the
        same sizes (``spart_mart_solve_frames_workspace``): a writeable
        C-contiguous array, aligned for float64 (any NumPy allocation is),
        of at least :func:`mart_frames_workspace_size` bytes; its contents
        afterwards are unspecified. None: allocated and freed by the call.
        The results are the same bits either way.
    Others as :func:`mart`.

    Returns
    -------
    list of MartResult, one a frame, in order.
    """
    function = "spart.mart_frames"
    ctx, pair, operators, shape_scene, images = _problem(
        instrument, images, function, num_channel, gain, read_noise, frames=True)
    num_frames = len(images) if images.ndim else 0
    if num_frames < 1:
        raise _core.argument_error(function, "images: no frames", "shape")
    options, kept = _options(operators, shape_scene, function, guess, gamma,
                             threshold_convergence, num_iteration, intermediate, stop_rule,
                             target, num_frames)
    out = ffi.new("spart_mart_result *[]", num_frames)
    if workspace is None:
        ctx.check(lib.spart_mart_solve_frames(ctx.pointer, operators, num_frames,
                                              _core.pointer(images), options, int(batch_frames),
                                              out), "spart_mart_solve_frames")
    else:
        if not isinstance(workspace, np.ndarray):
            raise _core.argument_error(function, f"workspace: a {type(workspace).__name__}; "
                                       "give a NumPy array (numpy.empty(bytes, numpy.uint8))",
                                       "type")
        if not workspace.flags.c_contiguous or not workspace.flags.writeable:
            raise _core.argument_error(function, "workspace: not a writeable C-contiguous "
                                       "array; spart works in it")
        ctx.check(lib.spart_mart_solve_frames_workspace(
            ctx.pointer, operators, num_frames, _core.pointer(images), options,
            int(batch_frames), ffi.from_buffer(workspace, require_writable=True),
            workspace.nbytes, out), "spart_mart_solve_frames_workspace")
    results = []
    try:
        for f in range(num_frames):
            results.append(MartResult(out[f], shape_scene))
    finally:
        for f in range(num_frames):
            lib.spart_mart_result_free(out[f])
    return results


def mart_frames_workspace_size(instrument: Union[IdealInstrument, Tuple[Regridder, Regridder]],
                               num_frames: int, batch_frames: int = 0,
                               intermediate: bool = False, num_channel: Optional[int] = None,
                               gain: Optional[float] = None,
                               read_noise: Optional[float] = None) -> int:
    """
    The bytes of working memory :func:`mart_frames` needs for ``num_frames``
    frames of this instrument (or pair of Regridders) with these options
    (``spart_mart_frames_workspace_size``), for its ``workspace=``.
    """
    function = "spart.mart_frames_workspace_size"
    ctx, pair, operators, shape_scene = _operators(instrument, function, num_channel, gain,
                                                   read_noise)
    options, kept = _options(operators, shape_scene, function, None, None, 1e-3, 100,
                             intermediate, "threshold", 1.0, int(num_frames))
    out = ffi.new("size_t *")
    ctx.check(lib.spart_mart_frames_workspace_size(ctx.pointer, operators, int(num_frames),
                                                   options, int(batch_frames), out),
              "spart_mart_frames_workspace_size")
    return int(out[0])


class MartInverter:
    """
    ctis's ``MartInverter(instrument, gamma=None, threshold_convergence=1e-3,
    *, num_iteration=100, intermediate=False)``; call it as
    ``mart(images, guess=None)``. See :func:`mart`.
    """

    def __init__(self, instrument: IdealInstrument, gamma: Optional[float] = None,
                 threshold_convergence: float = 1e-3, *, num_iteration: int = 100,
                 intermediate: bool = False) -> None:
        self.instrument = instrument
        self.gamma = gamma
        self.threshold_convergence = threshold_convergence
        self.num_iteration = num_iteration
        self.intermediate = intermediate

    def __call__(self, images: npt.ArrayLike, guess: Optional[npt.ArrayLike] = None,
                 callback: Optional[Callable[[dict], Any]] = None) -> "MartResult":
        return mart(self.instrument, images, guess=guess, gamma=self.gamma,
                    threshold_convergence=self.threshold_convergence,
                    num_iteration=self.num_iteration, intermediate=self.intermediate,
                    callback=callback)
