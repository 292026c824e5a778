"""
spart from Python: regridding weights, sparse operators (Regridders) and
MART inversions of the C library spart, with NumPy arrays in and out.

The surface is that of the Python packages ``regridding`` and ``ctis``, with
the same argument names and defaults:

>>> import numpy as np, spart
>>> x = np.linspace(-1, 1, 11)
>>> w = spart.weights(x, np.linspace(-1, 1, 6), method="conservative")
>>> spart.regrid_from_weights(*w, np.ones(10))
array([2., 2., 2., 2., 2.])
>>> r = spart.Regridder.from_weights(w)
>>> r(np.ones(10)), r.T(np.ones(5)).shape
(array([2., 2., 2., 2., 2.]), (10,))

Arrays: NumPy arrays are read and written in place, never copied, so they
must be float64 and C-contiguous (outputs also writeable); anything else
raises a SpartTypeError or SpartValueError naming the argument. Lists and
scalars are converted. Every error of the C library is a SpartError
carrying spart's status code (``.status``, ``.status_name``) and sentence.

Threads: each Python thread has its own spart context (set_threads sets
the OpenMP threads of the calling thread's); the GIL is released during
every C call.
"""

from ._core import (SpartError, SpartNotImplementedError, SpartTypeError, SpartValueError,
                    get_threads, set_threads, status_name, version)
from ._csr_matrix import CsrMatrix
from ._instrument import IdealInstrument, psf_gaussian, scene_gaussians, wavelength_from_velocity
from ._mart import MartInverter, MartResult, mart, mart_frames, mart_frames_workspace_size
from ._permute import PermuteBlock, PermutePlan
from ._regridder import Regridder
from ._scoring import score_candidates
from ._softmax import rows_from_index, softmax, softmax_aggregate, softmax_backward
from ._stream import WeightsStream
from ._vcs import VcsMatrix
from ._weights import (Weights, convolve_weights, regrid, regrid_from_weights,
                       transpose_weights, transpose_weights_conservative, weights)

__version__ = version()

__all__ = [
    "CsrMatrix", "IdealInstrument", "MartInverter", "MartResult", "PermuteBlock",
    "PermutePlan", "Regridder", "SpartError",
    "SpartNotImplementedError", "SpartTypeError", "SpartValueError", "VcsMatrix", "Weights",
    "WeightsStream",
    "convolve_weights", "get_threads", "mart", "mart_frames", "mart_frames_workspace_size",
    "psf_gaussian", "regrid", "regrid_from_weights",
    "rows_from_index", "scene_gaussians", "score_candidates", "set_threads", "softmax",
    "softmax_aggregate", "softmax_backward", "status_name", "transpose_weights",
    "transpose_weights_conservative", "version", "wavelength_from_velocity", "weights",
]
